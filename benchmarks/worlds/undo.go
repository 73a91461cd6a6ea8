package main

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// undo is the list of things to take down again, run last-made-first. Every
// step runs even when an earlier one fails; failures are reported together.
type undo struct {
	log   io.Writer
	steps []undoStep
}

type undoStep struct {
	what string
	fn   func(ctx context.Context) error
}

// push records how to take down something just made (or about to be made:
// a step must cope with finding nothing to do).
func (u *undo) push(what string, fn func(ctx context.Context) error) {
	u.steps = append(u.steps, undoStep{what, fn})
}

// mark is a point to unwind back to.
func (u *undo) mark() int { return len(u.steps) }

// unwind runs the steps pushed since mark, newest first, and forgets them.
func (u *undo) unwind(ctx context.Context, mark int) error {
	var errs []error
	for len(u.steps) > mark {
		s := u.steps[len(u.steps)-1]
		u.steps = u.steps[:len(u.steps)-1]
		if err := s.fn(ctx); err != nil {
			fmt.Fprintf(u.log, "cleanup: %s: %v\n", s.what, err)
			errs = append(errs, fmt.Errorf("%s: %w", s.what, err))
		}
	}
	return errors.Join(errs...)
}
