// Package rxstamp reads a TCP connection with the kernel's receive time of
// the bytes each read returns: the instant they reached the host, not the
// instant the reading goroutine ran again.
//
// A reader's stamp taken when its read returns is late by however long
// the goroutine waited for a processor after the bytes came: nothing when
// the process is idle, milliseconds when many streams wake at once on a
// few cores (a burst's first bytes), which is the client's own error in
// every time to first token it reports. On Linux the socket's
// SO_TIMESTAMPNS option makes each recvmsg carry the receive time of the
// last packet whose bytes it returned (the kernel's wall clock, taken as
// the packet entered the network stack); Reader.Read converts it to the
// monotonic clock by the wall-clock lag at the moment the read returns:
//
//	at = now - (wall(now) - kernel stamp)
//
// Both readings of the lag come from the same wall clock, so a step of it
// between the two (rare: NTP slews rather than steps) is the only error
// beside the kernel's own; Read clamps at to the reader's previous stamp
// and to now, so that stamps never go back nor ahead of the read.
//
// Elsewhere (other systems, a connection that is not TCP, a socket that
// refuses the option) New returns nil and the caller stamps its reads as
// they return.
package rxstamp
