package view

import (
	"strings"

	"github.com/zarrfs/zarrfs/zarr"
)

// InfoText is the content of a node's info.txt, which `zarrfs info` prints
// too: the engine's summary, ending in a newline.
func InfoText(n *zarr.Node) string {
	text := n.Info().Text()
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text
}
