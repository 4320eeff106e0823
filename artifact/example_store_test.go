package artifact_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/abstractframework/abstractgateway/artifact"
)

// Store content in memory and on disk: ids are content hashes scoped by
// run, and identical bytes share one blob.
func Example() {
	dir, err := os.MkdirTemp("", "artifact-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fs, err := artifact.NewFS(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer fs.Close()

	ctx := context.Background()
	report := []byte("quarterly report")
	for _, st := range []artifact.Store{artifact.NewMemory(), fs} {
		a, err := st.Put(ctx, artifact.PutParams{Content: report, ContentType: "text/plain", RunID: "run-1",
			Tags: map[string]string{"kind": "report"}})
		if err != nil {
			log.Fatal(err)
		}
		again, err := st.Put(ctx, artifact.PutParams{Content: report, ContentType: "text/plain", RunID: "run-1"})
		if err != nil {
			log.Fatal(err)
		}
		other, err := st.Put(ctx, artifact.PutParams{Content: report, RunID: "run-2"})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("same run, same id:", a.ArtifactID == again.ArtifactID,
			"| other run, same blob:", a.ArtifactID != other.ArtifactID && a.BlobID == other.BlobID)

		// The second Put of run-1 replaced the first one's metadata: no tags.
		found, err := st.Search(ctx, artifact.SearchParams{RunID: "run-1"})
		if err != nil {
			log.Fatal(err)
		}
		for _, m := range found {
			fmt.Println(m.RunID, m.ContentType, m.SizeBytes, m.Tags)
		}
	}
	blobs, err := os.ReadDir(filepath.Join(dir, "artifacts", "blobs"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("blob files on disk:", len(blobs))
	// Output:
	// same run, same id: true | other run, same blob: true
	// run-1 text/plain 16 map[]
	// same run, same id: true | other run, same blob: true
	// run-1 text/plain 16 map[]
	// blob files on disk: 1
}
