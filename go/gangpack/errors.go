package gangpack

import "strings"

// The kinds of an [Error].
const (
	// KindInvalidInput: manifests or objects that fail validation or conversion.
	KindInvalidInput = "InvalidInput"
	// KindInvalidArgument: an argument of the wrong shape (an unknown policy, a
	// malformed time, a claim that is not NAMESPACE/NAME).
	KindInvalidArgument = "InvalidArgument"
	// KindNotFound: a unit, node, device, rule or session that does not exist.
	KindNotFound = "NotFound"
	// KindAlreadyExists: adding what exists already.
	KindAlreadyExists = "AlreadyExists"
	// KindConflict: a change the state refuses (a device in use, capacity exceeded).
	KindConflict = "Conflict"
	// KindIoError: reading or printing failed.
	KindIoError = "IoError"
	// KindInternal: the module panicked (a gangpack bug); the instance was discarded.
	KindInternal = "Internal"
)

// Error is a failed call: its kind and every problem, as the command line prints
// them after "error: ".
type Error struct {
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Message is every problem's line, one per line.
	Message string `json:"message"`
	// Problems lists each problem with where it is.
	Problems []Problem `json:"problems"`
}

// Problem is one problem of an [Error]: where it is, when known, and what is wrong.
type Problem struct {
	// Line is the whole line, as the command prints it.
	Line string `json:"line"`
	// File is the file (the name given with the input), when known.
	File string `json:"file,omitempty"`
	// Doc is the document in the file (1-based), when known.
	Doc int `json:"doc,omitempty"`
	// Item is the item of a `kind: List` (0-based), when known.
	Item *int `json:"item,omitempty"`
	// Object is the object, `Kind "ns/name"`, when known.
	Object string `json:"object,omitempty"`
	// Field is the field path (`spec.devices.requests[0].name`), empty for the whole
	// object or argument.
	Field string `json:"field"`
	// Message says what is wrong.
	Message string `json:"message"`
}

// Error returns "gangpack: KIND: MESSAGE".
func (e *Error) Error() string {
	return "gangpack: " + e.Kind + ": " + strings.ReplaceAll(e.Message, "\n", "; ")
}
