package fakeserver_test

import (
	"fmt"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

// A profile is looked up by name; ProfileNames lists the names.
func ExampleProfile() {
	fmt.Println(fakeserver.ProfileNames())
	cfg, err := fakeserver.Profile("reasoning")
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Model, cfg.MaxModelLen, cfg.SpecTokens, cfg.ReasoningTokens)
	_, err = fakeserver.Profile("huge")
	fmt.Println(err)
	// Output:
	// [fast plain reasoning]
	// fake-reasoning 262144 {1, 7} {230, 480}
	// fakeserver: Profile = "huge": want one of [fast plain reasoning]
}

// A dialect preset is looked up by name; its mode fields hold the names
// the field documentation lists, and an empty one means the default.
func ExampleDialectByName() {
	fmt.Println(fakeserver.DialectNames())
	d, err := fakeserver.DialectByName("ollama")
	if err != nil {
		panic(err)
	}
	fmt.Printf("reasoning field %q, role %q, usage %q\n", d.ReasoningField, d.Role, d.Usage)
	_, err = fakeserver.DialectByName("tgi")
	fmt.Println(err)
	// Output:
	// [mock-llm ollama vllm]
	// reasoning field "reasoning", role "every", usage ""
	// fakeserver: Dialect = "tgi": want vllm, ollama or mock-llm
}
