package postgres

// SchemaSQL exposes schemaSQL to the external tests.
var SchemaSQL = schemaSQL
