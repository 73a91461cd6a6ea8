package mongoadapter

import (
	"errors"
	"strings"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/binkyhq/binky/sdk"
)

// fail turns err into the reply's *sdk.Error: "<op>: <cause>" with the
// code its cause deserves and every password of the admin URL raw (as the
// request gave it, parsed or not) scrubbed out.
func fail(op, raw string, err error) error {
	var se *sdk.Error
	if errors.As(err, &se) {
		return &sdk.Error{Code: se.Code, Message: sdk.ScrubAdmin(oneLine(op+": "+se.Message), raw)}
	}
	code := classify(err)
	return &sdk.Error{Code: code, Message: sdk.ScrubAdmin(oneLine(op+": "+err.Error())+hint(code), raw)}
}

// classify picks the reply code of a driver error.
func classify(err error) sdk.Code {
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		switch ce.Code {
		case 18, 13, 11: // AuthenticationFailed, Unauthorized, UserNotFound
			return sdk.CodeAuth
		case 73, 2, 9: // InvalidNamespace, BadValue, FailedToParse
			return sdk.CodeInvalid
		}
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "auth error"), strings.Contains(msg, "AuthenticationFailed"), strings.Contains(msg, "Authentication failed"):
		return sdk.CodeAuth
	case mongo.IsNetworkError(err), mongo.IsTimeout(err), strings.Contains(msg, "server selection error"), sdk.IsNetworkError(err):
		return sdk.CodeUnreachable
	}
	return sdk.CodeInternal
}

func hint(c sdk.Code) string {
	switch c {
	case sdk.CodeUnreachable:
		return " (is the MongoDB server running, and are admin_url's host and port right?)"
	case sdk.CodeAuth:
		return " (check admin_url's user, password and authSource; the user needs to list, create and drop databases)"
	}
	return ""
}

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
