package fs

import "testing"

func TestAppendLine(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"empty", "", "\n"},
		{"ascii", "hello world", "hello world\n"},
		{"backslash", `a\b`, `a\\b` + "\n"},
		{"newline", "a\nb", `a\nb` + "\n"},
		{"carriage return", "a\r\nb", `a\r\nb` + "\n"},
		{"tab kept", "a\tb", "a\tb\n"},
		{"nul kept", "a\x00b", "a\x00b\n"},
		{"utf8", "Zürich 東京 🌍", "Zürich 東京 🌍\n"},
		{"replacement char is valid", "\uFFFD", "\uFFFD\n"},
		{"invalid byte", "a\xffb", `a\xffb` + "\n"},
		{"truncated sequence", "\xe6\x9d", `\xe6\x9d` + "\n"},
		{"surrogate", "\xed\xa0\x80", `\xed\xa0\x80` + "\n"},
		{"overlong", "\xc0\xaf", `\xc0\xaf` + "\n"},
		{"literal backslash x", `\xff`, `\\xff` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := string(appendLine(nil, []byte(c.in))); got != c.want {
				t.Errorf("appendLine(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
