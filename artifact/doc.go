// Package artifact stores large or binary payloads outside run state and
// ledger records, and refers to them from JSON with a small ref object
// {"$artifact": "<artifact_id>"}.
//
// # Ids
//
// An artifact id is content-addressed and namespaced by run (ComputeID):
// storing the same bytes twice for the same run yields the same id and
// overwrites its metadata. Blob ids (BlobID) are plain content hashes, so
// identical bytes stored by different runs share one blob on disk. Every
// id that reaches a file path is checked with ValidID first.
//
// # Stores
//
// Store is the interface; Memory and FS implement it. FS keeps the Python
// FileArtifactStore layout, so both runtimes can read each other's
// artifacts:
//
//	<dir>/artifacts/blobs/<blob_id>.bin       content, kept once written (one that differs is rewritten)
//	<dir>/artifacts/refs/<artifact_id>.meta   Metadata JSON (indent 2)
//	<dir>/artifacts/<artifact_id>.bin/.meta   legacy v0 layout, read only
//	<dir>/artifacts/artifact_catalog.sqlite3  Python's catalog (CatalogFile)
//
// The catalog is Python's: FS never creates it, but when it exists FS
// upserts an artifact's row on every metadata write and deletes it with
// the artifact, so that Python's listings and gc see Go's artifacts.
//
// # Metadata
//
// Every stored artifact carries a Descriptor that is normalised on write:
// its render kind comes from the content type, its semantic kind from the
// tags, ids fall back to tags, and images and WAV files are inspected for
// their dimensions and duration. Access counters change only through
// RecordAccess; Get and Metadata have no side effects.
//
// # Offloading
//
// Offload walks a JSON value and moves oversized strings, objects and
// arrays into the store (a []byte as the base64 string the stores write,
// past the threshold like any string), leaving refs in their place. The
// store/offload package applies it to ledger records and terminal run
// states at the persistence boundary.
package artifact
