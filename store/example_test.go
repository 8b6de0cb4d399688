package store_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
)

// Open a directory store and read a key: the folder's zarr.json, and a
// part of a chunk file. A store's optional interfaces are found by type
// assertion, as io.WriterTo is.
func Example() {
	root, err := os.MkdirTemp("", "example-*.zarr")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	os.MkdirAll(filepath.Join(root, "c", "0"), 0o777)
	os.WriteFile(filepath.Join(root, "zarr.json"), []byte(`{"zarr_format":3,"node_type":"group"}`), 0o666)
	os.WriteFile(filepath.Join(root, "c", "0", "1"), []byte("0123456789"), 0o666)

	var s store.Store
	d, err := dir.Open(root, dir.Options{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	s = d

	ctx := context.Background()
	doc, err := s.Get(ctx, "zarr.json")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", doc)

	part, err := s.GetRange(ctx, "c/0/1", store.Range(2, 3))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", part)

	_, err = s.Get(ctx, "c/0/0")
	fmt.Println(errors.Is(err, store.ErrNotExist))

	if l, ok := s.(store.Lister); ok {
		keys, prefixes, _ := l.ListDir(ctx, "")
		fmt.Println(keys, prefixes)
	}
	// Output:
	// {"zarr_format":3,"node_type":"group"}
	// 234
	// true
	// [zarr.json] [c]
}
