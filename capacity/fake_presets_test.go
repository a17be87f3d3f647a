package capacity

import (
	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// fakeProfile is fakeserver.Profile(name); it panics on an unknown name.
func fakeProfile(name string) fakeserver.Config {
	c, err := fakeserver.Profile(name)
	if err != nil {
		panic(err)
	}
	return c
}

// fakeDialect is fakeserver.DialectByName(name); it panics on an unknown
// name.
func fakeDialect(name string) fakeserver.Dialect {
	d, err := fakeserver.DialectByName(name)
	if err != nil {
		panic(err)
	}
	return d
}
