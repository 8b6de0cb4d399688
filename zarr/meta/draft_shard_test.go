package meta

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/zarrfs/zarrfs/codec"
)

func TestDraftShardingInvalid(t *testing.T) {
	keys := chunkKeys{prefix: "c", sep: "/", glued: true, dir: "data/root/s"}
	for _, c := range []struct {
		raw  string
		want error
	}{
		{`{}`, ErrInvalidMetadata},
		{`[{"extension": "` + draftShardingURI + `", "type": "indexed", "configuration": {"chunks_per_shard": [2]}}]`, ErrInvalidMetadata},
		{`[{"extension": "` + draftShardingURI + `", "type": "indexed", "configuration": {"chunks_per_shard": [0, 2]}}]`, ErrInvalidMetadata},
		{`[{"extension": "` + draftShardingURI + `", "type": "indexed", "configuration": {"chunks_per_shard": [65536, 65536]}}]`, ErrInvalidMetadata},
		{`[{"extension": "` + draftShardingURI + `", "type": "hashed", "configuration": {"chunks_per_shard": [2, 2]}}]`, codec.ErrUnsupported},
		{`[{"extension": "x", "type": "indexed"}, {"extension": "y", "type": "indexed"}]`, codec.ErrUnsupported},
	} {
		if _, err := parseDraftTransformers(json.RawMessage(c.raw), keys, 2); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.raw, err, c.want)
		}
	}
	if w, err := parseDraftTransformers(json.RawMessage(`[]`), keys, 2); w != nil || err != nil {
		t.Errorf("empty list: %v", err)
	}
	s := &DraftShards{keys: keys, per: []int64{2, 3}, n: 6}
	for key, want := range map[string]string{
		"data/root/s/c3/4": "data/root/s/c1/1 4", "data/root/s/c0/0": "data/root/s/c0/0 0",
		"data/root/s/c3": "", "data/root/s/cx/1": "", "meta/root/s.array.json": "", "data/root/s/c-1/0": "",
	} {
		k, pos, ok := s.Locate(key)
		got := ""
		if ok {
			got = fmt.Sprintf("%s %d", k, pos)
		}
		if got != want && !(want == "" && !ok) {
			t.Errorf("locate(%q) = %q, want %q", key, got, want)
		}
	}
}
