package sqlite

// CanonicalDue exposes canonicalDue to the external tests, which check it
// against migration 015's index.
const CanonicalDue = canonicalDue

// ForeignDueQuery exposes foreignDueQuery, whose plan the tests check.
const ForeignDueQuery = foreignDueQuery
