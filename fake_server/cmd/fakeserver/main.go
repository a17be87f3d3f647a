// Command fakeserver serves the simulated OpenAI-compatible engine of package
// fakeserver on a TCP address, for benchmarks and clients outside Go tests.
//
//	go run ./fake_server/cmd/fakeserver -addr 127.0.0.1:8000 -profile reasoning
//	curl -N http://127.0.0.1:8000/v1/chat/completions \
//	  -d '{"model":"fake-reasoning","stream":true,"messages":[{"role":"user","content":"hi"}]}'
//	curl http://127.0.0.1:8000/fake/trace?index=0
//
// A profile and a dialect preset set every knob; the other flags override
// them when given. -h lists the flags by section: server, engine, dialect
// (-dialect-...) and faults (-fault-...). An invalid value is reported with
// the flag that sets it. It stops cleanly on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	fakeserver "github.com/anvilbench/anvil/fake_server"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fakeserver:", strings.TrimPrefix(err.Error(), "fakeserver: "))
		os.Exit(2)
	}
}

// defaultAddr is the command's listening address when the profile names
// none (Config's own default, port 0, suits tests, not a server).
const defaultAddr = "127.0.0.1:8000"

func run(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, names, err := parseFlags(args, stderr)
	if err != nil || cfg == nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	srv := fakeserver.NewUnstarted(*cfg)
	srv.Listener = ln
	srv.Start()
	fmt.Fprintf(stderr, "fakeserver: serving model %q (profile %s, dialect %s) at %s/v1\n", cfg.Model, names["profile"], names["dialect"], srv.URL)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	fmt.Fprintln(stderr, "fakeserver: shutting down")
	srv.Close()
	return nil
}

// parseFlags builds the Config the arguments describe and validates it; a
// nil Config and nil error mean -h was asked for. names holds the profile
// and dialect preset names.
func parseFlags(args []string, stderr io.Writer) (*fakeserver.Config, map[string]string, error) {
	// The knob flags default to the chosen profile and dialect, so those two
	// are looked up first.
	profile, dialect := preset(args, "profile", "reasoning"), preset(args, "dialect", "vllm")
	names := map[string]string{"profile": profile, "dialect": dialect}
	cfg, err := fakeserver.Profile(profile)
	if err != nil {
		return nil, nil, withFlag(err)
	}
	if cfg.Dialect, err = fakeserver.DialectByName(dialect); err != nil {
		return nil, nil, withFlag(err)
	}
	if cfg.Addr == "" {
		cfg.Addr = defaultAddr
	}
	fs := flag.NewFlagSet("fakeserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	register(fs, &cfg, map[string]*string{"profile": &profile, "dialect": &dialect})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, names, nil
		}
		return nil, nil, err
	}
	if fs.NArg() > 0 {
		return nil, nil, fmt.Errorf("unexpected argument %q: the command takes only flags (see -h)", fs.Arg(0))
	}
	if err := checkNonzero(fs); err != nil {
		return nil, nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, withFlag(err)
	}
	return &cfg, names, nil
}

// withFlag names the flag of the Config field a *fakeserver.ConfigError
// reports; other errors are returned as they are.
func withFlag(err error) error {
	var ce *fakeserver.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	if k, ok := flagFor(ce.Field); ok {
		return &flagError{flag: k.name, err: ce}
	}
	return err
}

// preset returns the last value of flag -name (or --name) in args, or def.
// The command takes no positional arguments, so any word may be a value.
func preset(args []string, name, def string) string {
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			break
		}
		a := strings.TrimPrefix(strings.TrimPrefix(args[i], "-"), "-")
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			def = v
		} else if a == name && i+1 < len(args) {
			def = args[i+1]
			i++
		}
	}
	return def
}
