module github.com/zarrfs/zarrfs

go 1.26.8

require (
	github.com/dsnet/compress v0.0.1 // indirect
	github.com/hanwen/go-fuse/v2 v2.12.1 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/ulikunitz/xz v0.5.17 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.28.0 // indirect
)
