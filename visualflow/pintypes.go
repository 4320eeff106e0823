package visualflow

import "strings"

// pinFamily groups editor pin types by the JSON shape they carry, for the
// load-time type check of data edges.
func pinFamily(t string) string {
	switch {
	case t == "" || t == "any":
		return "any"
	case t == "execution":
		return "execution"
	case t == "string" || t == "workspace_file" || t == "workspace_folder":
		return "string"
	case strings.HasPrefix(t, "provider"):
		return "provider"
	case strings.HasPrefix(t, "model"):
		return "model"
	case t == "number" || t == "boolean":
		return t
	case t == "array" || t == "tools" || t == "assertions":
		return "array"
	case strings.HasPrefix(t, "artifacts"):
		return "artifacts"
	case strings.HasPrefix(t, "artifact"):
		return "artifact"
	case t == "object" || t == "json_schema" || t == "memory" || t == "assertion" || t == "agent":
		return "object"
	}
	return "any" // unknown types are not checked
}

// pinTypesCompatible reports whether a wire from a pin of type src to a
// pin of type dst is acceptable. It follows the editor's connection rules
// (execution only to execution; any connects to everything; number and
// boolean to string; array-like to object; artifact pins to artifact or
// object pins; provider and model pins to and from string pins), so every flow the editor can save is accepted.
func pinTypesCompatible(src, dst string) bool {
	fs, fd := pinFamily(src), pinFamily(dst)
	if fs == "execution" || fd == "execution" {
		return fs == fd
	}
	if fs == "any" || fd == "any" || fs == fd {
		return true
	}
	switch {
	case (fs == "number" || fs == "boolean") && fd == "string":
		return true
	case (fs == "array" || fs == "artifacts") && fd == "object":
		return true
	case fs == "object" && fd == "array" && dst == "assertions":
		return true
	case fs == "artifact" && fd == "object", fs == "object" && fd == "artifact":
		return true
	case fs == "artifact" && fd == "string", fs == "string" && fd == "artifact":
		return true // artifact ids travel as strings
	case fs == "artifacts" && fd == "array", fs == "array" && fd == "artifacts":
		return true
	case (fs == "provider" || fs == "model") && fd == "string", fs == "string" && (fd == "provider" || fd == "model"):
		return true // string-like, typed only for the editor's dropdowns
	}
	return false
}
