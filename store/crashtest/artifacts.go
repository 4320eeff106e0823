package crashtest

import (
	"context"

	"github.com/abstractframework/abstractgateway/artifact"
)

// Artifacts is a killable artifact store: its writes are persistence
// points of the Store it was made with, counted in the same sequence, so
// that one kill point index covers the process's run store and artifact
// store alike (a process dies once, whichever it was writing to). Every
// call after the kill fails with ErrKilled.
type Artifacts struct {
	artifact.Store
	s *Store
}

// WrapArtifacts returns inner, killed with s: its writes (Put,
// UpdateMetadata, RecordAccess, Delete, DeleteByRun) are persistence
// points of s, of kind "artifact".
func WrapArtifacts(inner artifact.Store, s *Store) *Artifacts {
	return &Artifacts{Store: inner, s: s}
}

// Put is a persistence point.
func (a *Artifacts) Put(ctx context.Context, p artifact.PutParams) (*artifact.Metadata, error) {
	return artifactWrite(a, func() (*artifact.Metadata, error) { return a.Store.Put(ctx, p) })
}

// UpdateMetadata is a persistence point.
func (a *Artifacts) UpdateMetadata(ctx context.Context, p artifact.UpdateParams) (*artifact.Metadata, error) {
	return artifactWrite(a, func() (*artifact.Metadata, error) { return a.Store.UpdateMetadata(ctx, p) })
}

// RecordAccess is a persistence point.
func (a *Artifacts) RecordAccess(ctx context.Context, p artifact.AccessParams) (*artifact.Metadata, error) {
	return artifactWrite(a, func() (*artifact.Metadata, error) { return a.Store.RecordAccess(ctx, p) })
}

// Delete is a persistence point.
func (a *Artifacts) Delete(ctx context.Context, id string) (bool, error) {
	return artifactWrite(a, func() (bool, error) { return a.Store.Delete(ctx, id) })
}

// DeleteByRun is a persistence point.
func (a *Artifacts) DeleteByRun(ctx context.Context, runID string) (int, error) {
	return artifactWrite(a, func() (int, error) { return a.Store.DeleteByRun(ctx, runID) })
}

// Open fails after the kill, as Get.
func (a *Artifacts) Open(ctx context.Context, id string) (*artifact.Metadata, artifact.ReadSeekCloser, error) {
	if err := a.s.alive(); err != nil {
		return nil, nil, err
	}
	return a.Store.Open(ctx, id)
}

// Get fails after the kill.
func (a *Artifacts) Get(ctx context.Context, id string) (*artifact.Metadata, []byte, error) {
	if err := a.s.alive(); err != nil {
		return nil, nil, err
	}
	return a.Store.Get(ctx, id)
}

// Metadata fails after the kill.
func (a *Artifacts) Metadata(ctx context.Context, id string) (*artifact.Metadata, error) {
	if err := a.s.alive(); err != nil {
		return nil, err
	}
	return a.Store.Metadata(ctx, id)
}

// Exists fails after the kill.
func (a *Artifacts) Exists(ctx context.Context, id string) (bool, error) {
	if err := a.s.alive(); err != nil {
		return false, err
	}
	return a.Store.Exists(ctx, id)
}

// artifactWrite is Store.write for an artifact call returning a value.
func artifactWrite[T any](a *Artifacts, do func() (T, error)) (T, error) {
	var v T
	err := a.s.write("artifact", func() (err error) {
		v, err = do()
		return err
	})
	return v, err
}
