package meta

import "github.com/zarrfs/zarrfs/internal/pyjson"

// OrderedAttributes returns the user attributes the document doc holds, in
// document order, each value as its writer wrote it (pyjson.Value: bare
// NaN and Infinity are numbers, an integer keeps its spelling): what the
// NetCDF and ENVI views write, where ParseAttributes turns non-finite
// numbers into strings and a map loses the order. member names the member
// of doc that holds them ("attributes" in a v3 zarr.json), or is "" when
// doc is the attributes (v2 .zattrs, v1 attrs). ok is false when there
// is no such JSON object.
func OrderedAttributes(doc []byte, member string) (attrs []pyjson.Field, ok bool) {
	v, err := pyjson.Parse(doc)
	if err != nil || v.Kind != pyjson.Object {
		return nil, false
	}
	if member == "" {
		return v.Members, true
	}
	for _, m := range v.Members {
		if m.Name == member && m.Value.Kind == pyjson.Object {
			return m.Value.Members, true
		}
	}
	return nil, false
}
