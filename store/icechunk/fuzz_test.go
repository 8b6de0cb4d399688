package icechunk

import (
	"testing"
)

// fuzzSeeds adds the metadata files of a test repository, whole and cut,
// and a few hostile headers.
func fuzzSeeds(f *testing.F, fileType int) {
	for _, data := range repoFiles(f) {
		if int(data[37]) != fileType {
			continue
		}
		f.Add(data)
		_, buf, _ := payload(data, fileType)
		plain := append(append([]byte(nil), data[:headerSize]...), buf...)
		plain[38] = 0
		f.Add(plain)
		f.Add(plain[:headerSize+len(buf)/2])
		f.Add(data[:len(data)-3])
	}
	f.Add([]byte(Magic))
	f.Add(append([]byte(Magic+"                        "), 2, byte(fileType), 0, 4, 0, 0, 0))
}

func FuzzParseSnapshot(f *testing.F) {
	fuzzSeeds(f, TypeSnapshot)
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := ParseSnapshot(data); err == nil {
			newSnapshot(&Repo{}, s)
		}
	})
}

func FuzzParseManifest(f *testing.F) {
	fuzzSeeds(f, TypeManifest)
	f.Fuzz(func(t *testing.T, data []byte) { ParseManifest(data) })
}

func FuzzParseRepoInfo(f *testing.F) {
	fuzzSeeds(f, TypeRepoInfo)
	f.Fuzz(func(t *testing.T, data []byte) { ParseRepoInfo(data) })
}

func FuzzParseID(f *testing.F) {
	f.Add("1CECHNKREP0F1RSTCMT0")
	f.Add("1cechnkrep0f1rstcmtO")
	f.Add("ZZZZZZZZZZZZZZZZZZZZ")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err == nil && len(s) == 20 && s == id.String() {
			return
		}
		if err == nil {
			if _, err := ParseID(id.String()); err != nil {
				t.Fatalf("%q: %v", id.String(), err)
			}
		}
	})
}
