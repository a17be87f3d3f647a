// Package perfbench holds the client's performance benchmarks, the minimal
// SSE server they measure it against, and the minimal reader (Floor) that
// is the floor of its CPU cost. The server is deliberately not the fake
// server of package fakeserver: it has no simulation, no tokenizer and no
// scheduler, only a known schedule (time to first token, then one content
// event every Gap), so what a benchmark measures is the client. It records
// what it saw of each request (Record) for the benchmarks to match to the
// client's rows.
//
// The benchmarks start the server in a separate process (the test binary
// re-executed with ServerEnv set, see the package's TestMain), so the
// client process's CPU time (getrusage) and memory are the client's alone,
// and the server's scheduling never competes with the client's goroutines
// inside one runtime.
//
// # The three figures
//
// Run them all, in one run, with
//
//	go test -run '^$' -bench . -benchtime 5x -timeout 30m ./capacity/internal/perfbench
//
// Each figure is a median over the iterations (-benchtime Nx: N runs).
// The machines this is run on are shared and noisy: each benchmark logs
// the load average beside its figures, and the CPU figure is a ratio of
// two readers measured in turn in one process, which the machine's load
// moves alike.
//
//   - CPU per chunk, BenchmarkCPUPerChunk: cpu-ns/chunk, the client's CPU
//     time per streamed chunk, beside floor-cpu-ns/chunk, the minimal
//     reader's (net/http and a 64 KiB bufio line scan counting "data: "
//     lines, nothing else), and floor-ratio, the client's over the
//     floor's. 20 requests of 20,000 chunks at concurrency 4, startup
//     subtracted (the same readers' CPU for 20 requests of one chunk).
//     The goal: a ratio of at most 1.3.
//   - The client's own TTFT error, BenchmarkOwnError: the client's first
//     content stamp minus the instant the server wrote the response's
//     first byte, on one clock (the wall clock both processes read; see
//     the benchmark for why that is exact), p50/p95/p99 at concurrency 1,
//     64, 256 and 1024, for a burst (the closed loop) and for paced (open
//     loop) dispatch; and t0's lead, the server's handler start minus t0.
//     In a burst, the minimal reader's own error beside it (its first
//     data line's stamp minus the same server's first write), and
//     own-err-floor-ratio, the client's p95 over the floor's. The goal:
//     own-err-p95-ms at most 1 ms up to c=256 and 5 ms at c=1024.
//   - CPU per request, BenchmarkCPUPerRequest: cpu-us/request, the
//     client's CPU time for a request apart from its chunks (its body, the
//     write, the response head, the first and last events, its row of the
//     report: 420 requests of one chunk less 20), beside the floor's and
//     their floor-ratio, and allocs/request and bytes/request: the CPU the
//     first events of a burst queue behind.
//   - Per streamed API (chat, completions, Responses, Messages),
//     BenchmarkCPUPerEvent: CPU per chunk's figures for one content event
//     of each dialect; BenchmarkOwnErrorPerAPI: the own TTFT error of each
//     at c=1 and 64, every API run in turn in each iteration, and
//     {api}-minus-chat-p50-ms, what the dialect's own framing (the opening
//     events decoded before the first content) adds to chat's.
//   - Memory per stream, BenchmarkMemoryPerStream: steady-KiB/stream, the
//     growth of the client process's resident memory with 16,384 streams
//     open and streaming at once, per stream, beside rss-KiB/stream, the
//     peak of the whole run (dispatch and report included), and
//     cpu-us/request, the CPU time per request of that run (connection,
//     body, stream and report); and, from runtime/metrics after a forced
//     collection at the steady moment (which the garbage collector's
//     timing does not move as it moves the resident size), per stream:
//     goroutines/stream, stack-KiB/stream (the stacks' room),
//     stack-used-KiB/stream (the frames in use) and heap-live-KiB/stream
//     (the heap's live objects). -perfbench.profiles=DIR writes a heap and
//     a goroutine profile of that moment into DIR. The goal: at most 32
//     KiB per stream.
//
// Single figures can be run on their own, e.g.
//
//	go test -run '^$' -bench CPUPerChunk -benchtime 7x ./capacity/internal/perfbench
//	go test -run '^$' -bench 'OwnError/burst' -benchtime 5x ./capacity/internal/perfbench
//	go test -run '^$' -bench 'MemoryPerStream/streams=16384' -benchtime 3x ./capacity/internal/perfbench
//
// # What the figures say
//
// The own error's floor is the machine's: both processes share its cores,
// so at c=1024 with an event every 5 ms the server writes 204,800 events
// a second and the client reads as many, each its own write and read
// system call (a few microseconds on either side), which alone keeps a
// core of a 2-core machine busy; when other work shares the cores the
// server's own lateness (server-late-p95-ms) says so, and the client's
// wake-ups wait as long. Quote an own error beside that figure and the
// load average.
//
// # Last measured
//
// Main at b045be7, one run of the whole package with -benchtime 3x, on a
// shared 2-core AMD EPYC machine at a load average of 18-22 from other
// work: CPU per chunk 267 ns against the floor's 212, a ratio of 1.26
// (its iterations 1.26, 1.30, 1.24; 1.86 at 5dc9544, before the common
// chat event was decoded in one pass over its bytes), 12.2 bytes and
// 0.013 allocations a chunk (each request's setup spread over its
// chunks). The other APIs' events, not on that path: 6.3 (completions),
// 4.8 (responses), 6.4 (messages). The own error p95 in a burst: 0.27 ms
// at c=1 (the floor's 0.49), 3.4 ms at c=64 (the floor's 1.9), 12 ms at
// c=256 and 801 ms at c=1024, where the server's own first writes were
// 3.2, 61 and 220 ms late at p95 and t0's lead 11, 42 and 473 ms: the
// machine's, not the client's. Paced: 0.43 ms at c=1, 1.9 at c=64, 67 at
// c=256. Memory with 16,384 streams: 57 KiB a stream steady (60 at the
// peak, 966 MiB); in that steady state the goroutines' stacks alone are
// 28.4 KiB a stream (three goroutines a stream, the request's and
// net/http's read and write loops: 465 MiB of stack in use for 49,163
// goroutines) and the heap in use 26.5 KiB, of which net/http's
// per-connection bufio reader and writer (4 KiB each) are the largest
// part. 1,057 us of CPU per request.
//
// Memory, main at 2d898b1 against 4d9ee15, interleaved runs of
// MemoryPerStream/streams=16384 -benchtime 1x at a load average of
// 17-21: steady 50.9 and 50.5 KiB a stream against 57.1 and 50.5 (the
// resident figure moves with the garbage collector's timing by several
// KiB from run to run); the live bytes, after forced collections with
// 4,096 streams in their second gap: stacks 21.0 KiB a stream (24.1
// before), heap 20.8 (22.2). The write buffer is 2 KiB (the read buffer
// stays 4 KiB: at 2 KiB the CPU per chunk rose), and the request
// goroutine's frames while it waits for bytes are about 1.7 KiB smaller,
// which lets part of the request goroutines' stacks halve to 8 KiB; CPU
// per chunk's floor ratio 1.23 and 1.07 against 1.29 and 1.54 before.
// What 32 KiB still needs: the rest of the request goroutines at 8 KiB
// (a few hundred bytes of frames more), net/http's read and write loops
// (two goroutines of 4 KiB a stream that net/http's Transport starts)
// and its 4 KiB read buffer gone, which takes reading HTTP/1.1 on the
// request goroutine.
//
// Memory, main at db98f46 against a67a5a3 (package h1: the run's plain
// http requests read and written on the request goroutine), test
// binaries run alternately, MemoryPerStream/streams=16384 -benchtime 3x
// three times each at a load average of 7-11: steady 38.75, 36.32 and
// 36.94 KiB a stream against 21.36, 21.35 and 21.37 (median 36.94
// against 21.36); one goroutine a stream instead of three, stacks 16.6
// against 7.9 KiB a stream, heap in use 19.3 against 12.8; CPU per
// request 642-767 us against 550-619. CPUPerChunk -benchtime 5x, nine
// runs each at a load average of 3-5: floor ratio median 1.34 against
// 1.36 (client 245 against 258 ns a chunk, floor 172 against 188: the
// floor moved as much as the client). OwnError/burst/c=1 own-err-p95,
// -benchtime 10x three times each at a load average under 0.3: 1.137,
// 0.319, 0.391 ms against 0.769, 0.379, 0.328 (median 0.391 against
// 0.379); at -benchtime 5x eight times each at 3-5, 0.393 against 0.441,
// within the runs' spread (0.26-0.90 and 0.35-0.94).
//
// Main at e683229 (package h1, the warm-up and the drain after a
// terminal event through a 512-byte buffer, the request's filing off its
// goroutine's stack), one run of MemoryPerStream/streams=16384 and
// CPUPerChunk, -benchtime 3x, at a load average of 1-3: steady 21.05 KiB
// a stream (peak 27.3, 438 MiB; in flight 21.05); one goroutine a
// stream, stacks 7.9 KiB (3.5 KiB of frames in use), heap in use 12.9
// KiB; 649 us of CPU a request. CPU per chunk 164 ns against the floor's
// 127, a ratio of 1.21 (iterations 1.47, 1.21, 1.13). The request
// goroutine's stack stays at 8 KiB while its frames and the runtime's
// 800 bytes of nosplit room stay under 4,096 bytes (runtime.shrinkstack
// halves a stack only below a quarter in use); 4 KiB would need them
// under 2,048, about 1,250 bytes of frames, less than half of today's.
//
// Per API, main at 5af2109, one run of each benchmark
// (-benchtime 3x and 5x) at a load average of 19: CPU per event, chat 352
// ns (floor ratio 1.67), completions 379 (2.60), Responses 460 (2.45),
// Messages 421 (3.09), where before the repeat path of package jsonpick
// they were 347 (1.80), 980 (5.46), 689 (3.62) and 640 (4.73); 0 allocs
// an event. Own TTFT error p50 at c=1: chat 0.172 ms, completions 0.151,
// Responses 0.161, Messages 0.156; minus chat's -0.024, -0.025 and
// -0.009 ms: the framing's cost is below what one run resolves.
//
// BenchmarkTimingError is the end-to-end accuracy: TTFT and TPOT minus the
// server's schedule, which adds the server's own lag (the server late
// figure of BenchmarkOwnError) to the client's share.
package perfbench
