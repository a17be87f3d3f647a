package discovery

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/anvilbench/anvil/capacity/internal/client"
)

// This file reads how many requests a llama.cpp server runs at once
// (capacity/PROTOCOL.md#slots): llama-server --parallel N serves N slots,
// each with its own window, and queues a request that finds every slot
// busy.

// llamaCppSlotsPath is llama.cpp's per-slot state: a JSON array with one
// object per slot (id, n_ctx, is_processing, ...). It is asked only when
// /props names no total_slots; a server started with --no-slots answers
// it with an error.
const llamaCppSlotsPath = "/slots"

// llamaCppSlots returns the slot count of a llama.cpp server and where it
// came from: /props total_slots (props is the /props answer), else the
// number of entries of GET {root}/slots (asked with ask); 0 and "" when props is no
// llama.cpp answer (it has no default_generation_settings) or neither
// names a positive count.
func llamaCppSlots(ctx context.Context, ask askFunc, props []byte) (int, string) {
	var p struct {
		Default    json.RawMessage `json:"default_generation_settings"`
		TotalSlots json.RawMessage `json:"total_slots"`
	}
	if json.Unmarshal(props, &p) != nil {
		return 0, ""
	}
	if n, ok := client.PositiveInt(p.TotalSlots); ok {
		return n, llamaCppPropsPath
	}
	if len(p.Default) == 0 || ctx.Err() != nil {
		return 0, ""
	}
	body, ok := ask(llamaCppSlotsPath, nil)
	if !ok {
		return 0, ""
	}
	var slots []json.RawMessage
	if json.Unmarshal(body, &slots) != nil || len(slots) == 0 {
		return 0, ""
	}
	return len(slots), llamaCppSlotsPath
}

// NoteSlots adds to d.Note that concurrency requests in flight exceed the
// server's slots, when they do: the requests beyond the slots wait in the
// server's queue, inside their TTFT.
func (d *Result) NoteSlots(concurrency int) {
	if d.Slots == 0 || concurrency <= d.Slots {
		return
	}
	note := fmt.Sprintf("Workload.Concurrency %d exceeds the %d slots the server runs at once (%s): up to %d requests wait in the server's queue, and that wait is part of their TTFT; llama.cpp's --parallel splits --ctx-size across its slots",
		concurrency, d.Slots, d.SlotsSource, concurrency-d.Slots)
	if d.Advertised > 0 && d.AdvertisedSource != sourceShow {
		note += fmt.Sprintf(", each serving the window of %d tokens it advertises (%s)", d.Advertised, d.AdvertisedSource)
	}
	note += ": raise --parallel (and --ctx-size with it) or lower the concurrency"
	if d.Note != "" {
		note = d.Note + "; " + note
	}
	d.Note = note
}
