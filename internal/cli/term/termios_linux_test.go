package term_test

import (
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// assertCookedMode checks that the terminal behind the pty master is back in
// canonical mode with echo, as it was before Run put it in raw mode. On Linux
// the master reports the terminal's settings.
func assertCookedMode(t *testing.T, master *os.File) {
	t.Helper()
	var tio syscall.Termios
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&tio))); errno != 0 {
		t.Fatalf("TCGETS: %v", errno)
	}
	const want = syscall.ICANON | syscall.ECHO | syscall.ISIG
	if tio.Lflag&want != want {
		t.Errorf("terminal left with lflag %#x, want ICANON|ECHO|ISIG (%#x) restored", tio.Lflag, want)
	}
}
