package artifact_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/artifact/artifacttest"
)

func TestMemory(t *testing.T) {
	t.Parallel()
	artifacttest.Run(t, func(t *testing.T) artifact.Store { return artifact.NewMemory() })
}
