package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"
)

// ExitError carries an exit status through kong back to Main. Err, when
// set, is printed after "binky: ".
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// Main parses args against grammar (a kong struct whose Home field is
// bound to home) and runs the chosen verb, binding what bind returns for
// the verb's Run. It returns the exit status. Both binaries print as
// "binky": binkyd is binky's other half, not a command of its own.
func Main(args []string, grammar any, home *string, bind func(ctx context.Context, home string) any, opts ...kong.Option) int {
	ctx, stop := Signals()
	defer stop()

	opts = append([]kong.Option{
		kong.Name("binky"),
		kong.Description("Give every git worktree its own running world."),
		kong.UsageOnError(),
		kong.Vars{"version": Version()},
		kong.Exit(func(code int) { panic(exitPanic(code)) }),
	}, opts...)
	parser, err := kong.New(grammar, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binky:", err)
		return 2
	}
	code := 0
	func() {
		defer func() {
			if r := recover(); r != nil {
				if p, ok := r.(exitPanic); ok {
					code = int(p)
					return
				}
				panic(r)
			}
		}()
		if len(args) == 0 {
			args = []string{"--help"}
		}
		kctx, perr := parser.Parse(args)
		if perr != nil {
			fmt.Fprintln(os.Stderr, "binky:", perr)
			code = 2
			return
		}
		code = ExitCode(kctx.Run(bind(ctx, HomeDir(*home))))
	}()
	return code
}

// Signals is the context every verb runs under: cancelled on an interrupt
// or SIGTERM (the one owner of signals, for Main and for binky's fast
// path alike).
func Signals() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// ExitCode is the exit status of a verb's Run returning err, after
// printing err as Main does: an ExitError's code (and its Err, when set),
// 1 for any other error, 0 for none.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(os.Stderr, "binky:", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintln(os.Stderr, "binky:", err)
	return 1
}

// exitPanic lets kong's exit (after --help or --version) unwind to Main.
type exitPanic int

// HomeDir is flag ($BINKY_HOME or --home) when set, else ~/.binky.
func HomeDir(flag string) string {
	if flag != "" {
		return flag
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return ".binky"
	}
	return h + string(os.PathSeparator) + ".binky"
}
