//go:build unix

package jsonfile

import (
	"io/fs"
	"syscall"
)

// fileIDOf returns the device and inode numbers of the file fi describes.
func fileIDOf(fi fs.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileID{}
}
