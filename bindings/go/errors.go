package hermestools

/*
#include "shims.h"
*/
import "C"

import (
	"fmt"
)

// Status mirrors the C ht_status codes (values are ABI and never change).
type Status int32

const (
	StatusOK              Status = 0
	StatusInvalidArgument Status = 1
	StatusInvalidUTF8     Status = 2
	StatusInvalidJSON     Status = 3
	StatusNotFound        Status = 4
	StatusConflict        Status = 5
	StatusClosed          Status = 6
	StatusCancelled       Status = 7
	StatusTimeout         Status = 8
	StatusToolError       Status = 9
	StatusPanic           Status = 10
	StatusInternal        Status = 11
	StatusUnsupported     Status = 12
)

var statusNames = map[Status]string{
	StatusOK:              "ok",
	StatusInvalidArgument: "invalid_argument",
	StatusInvalidUTF8:     "invalid_utf8",
	StatusInvalidJSON:     "invalid_json",
	StatusNotFound:        "not_found",
	StatusConflict:        "conflict",
	StatusClosed:          "closed",
	StatusCancelled:       "cancelled",
	StatusTimeout:         "timeout",
	StatusToolError:       "tool_error",
	StatusPanic:           "panic",
	StatusInternal:        "internal",
	StatusUnsupported:     "unsupported",
}

// String gives the status' stable snake_case name.
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status(%d)", int32(s))
}

// Error is an API error from the library: the status plus its one-line message.
// Tool failures are not API errors: Dispatch returns their {"error": ...} text.
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "hermes-tools: " + e.Status.String()
	}
	return "hermes-tools: " + e.Status.String() + ": " + e.Message
}

// Is makes errors.Is(err, hermestools.ErrNotFound) match on the status.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Status == e.Status && (t.Message == "" || t.Message == e.Message)
}

// Sentinels for errors.Is.
var (
	ErrInvalidArgument = &Error{Status: StatusInvalidArgument}
	ErrInvalidUTF8     = &Error{Status: StatusInvalidUTF8}
	ErrInvalidJSON     = &Error{Status: StatusInvalidJSON}
	ErrNotFound        = &Error{Status: StatusNotFound}
	ErrConflict        = &Error{Status: StatusConflict}
	ErrClosed          = &Error{Status: StatusClosed}
	ErrCancelled       = &Error{Status: StatusCancelled}
	ErrTimeout         = &Error{Status: StatusTimeout}
	ErrUnsupported     = &Error{Status: StatusUnsupported}
)

// takeError turns a status and an optional ht_error into a Go error and
// frees the ht_error. It reads the error from the out-param of the same call,
// never from thread-local state.
func takeError(st C.ht_status, e *C.ht_error) error {
	if st == 0 {
		C.ht_error_free(e)
		return nil
	}
	msg := ""
	if e != nil {
		if code := C.ht_error_code(e); code != 0 {
			st = code // same as the returned status; the error object is authoritative
		}
		if m := C.ht_error_message(e); m != nil {
			msg = C.GoString(m)
		}
		C.ht_error_free(e)
	}
	return &Error{Status: Status(st), Message: msg}
}
