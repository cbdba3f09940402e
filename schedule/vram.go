package schedule

import (
	"fmt"
	"math"
)

// Workload kinds the estimator knows.
const (
	WorkInference = "inference"
	WorkLoRA      = "lora"
	WorkFull      = "full" // full fine-tune or pre-training with Adam
)

// BytesPerParam is the storage of one value at each precision.
var BytesPerParam = map[string]float64{
	"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5,
}

// VRAMInput describes a model and what is done with it.
type VRAMInput struct {
	ParamsB   float64 // parameters, in billions
	Precision string  // weights precision: fp32, tf32, bf16, fp16, fp8, int8, int4
	Workload  string  // inference, lora, full
	Batch     int     // sequences per step (inference: concurrent sequences)
	Context   int     // tokens per sequence
	// Layers and Hidden describe the model's shape; zero derives them from
	// ParamsB (see shape).
	Layers, Hidden int
	// KVHeadsRatio is kv_heads / attention_heads (1 for classic multi-head
	// attention, 1/8 for Llama-2-70B's grouped-query attention); 0 means 1,
	// the conservative choice.
	KVHeadsRatio float64
	// LoRAFraction is the share of parameters trained by LoRA; 0 means 1 %.
	LoRAFraction float64
}

// VRAMEstimate is the answer with its parts, so the page can show where the
// memory goes.
type VRAMEstimate struct {
	WeightsGiB     float64
	KVCacheGiB     float64
	GradientsGiB   float64
	OptimizerGiB   float64
	ActivationsGiB float64
	OverheadGiB    float64
	TotalGiB       float64
	Layers, Hidden int
}

const gib = 1 << 30

// Rules of thumb, each from published practice:
//
//   - Weights: parameters × bytes per parameter at the chosen precision.
//   - Inference overhead: +20 % of the weights for the CUDA context, kernels'
//     workspaces and fragmentation ("M = P × 4B / (32/Q) × 1.2").
//   - KV cache: 2 (K and V) × layers × hidden × kv-heads ratio × bytes ×
//     context × batch, stored at the weights' precision (fp16 for int8/int4
//     weights, as serving stacks do).
//   - Full fine-tune with Adam in mixed precision: 16 bytes per parameter:
//     2 (bf16 weights) + 2 (gradients) + 12 (fp32 master weights, momentum,
//     variance), the ZeRO paper's accounting.
//   - LoRA: frozen weights at their precision, plus 16 bytes per trained
//     parameter (the adapters with their gradients and Adam states).
//   - Activations when training, with flash attention: 34 × context × batch
//     × hidden bytes per layer (Korthikanti et al., 2022, without the
//     attention-matrix term that flash attention removes).
//   - LoRA recipes (PEFT, QLoRA) train with gradient checkpointing: only each
//     layer's 2-byte input is kept, plus one layer's full activations while
//     it is recomputed.
//   - Shape when not given: hidden ≈ 128 × layers (Llama and GPT-3 keep this
//     ratio) and parameters ≈ 12 × layers × hidden², so
//     layers = (P / 196,608)^(1/3).
func EstimateVRAM(in VRAMInput) (VRAMEstimate, error) {
	bytes, ok := BytesPerParam[in.Precision]
	switch {
	case !ok:
		return VRAMEstimate{}, fmt.Errorf("unknown precision %q", in.Precision)
	case in.ParamsB <= 0 || in.ParamsB > 10000:
		return VRAMEstimate{}, fmt.Errorf("parameters must be between 0 and 10,000 billion")
	case in.Workload != WorkInference && in.Workload != WorkLoRA && in.Workload != WorkFull:
		return VRAMEstimate{}, fmt.Errorf("unknown workload %q", in.Workload)
	case in.Batch < 0 || in.Context < 0 || in.Batch > 1<<16 || in.Context > 1<<24:
		return VRAMEstimate{}, fmt.Errorf("batch and context must be positive and reasonable")
	}
	batch, ctx := max(in.Batch, 1), in.Context
	if ctx == 0 {
		ctx = 2048
	}
	params := in.ParamsB * 1e9
	layers, hidden := in.Layers, in.Hidden
	if layers <= 0 || hidden <= 0 {
		layers, hidden = shape(params)
	}
	kvRatio := in.KVHeadsRatio
	if kvRatio <= 0 || kvRatio > 1 {
		kvRatio = 1
	}
	e := VRAMEstimate{Layers: layers, Hidden: hidden}
	e.WeightsGiB = params * bytes / gib
	switch in.Workload {
	case WorkInference:
		kvBytes := math.Max(bytes, 2)
		e.KVCacheGiB = 2 * float64(layers) * float64(hidden) * kvRatio * kvBytes * float64(ctx) * float64(batch) / gib
		e.OverheadGiB = 0.2 * e.WeightsGiB
	case WorkFull:
		// Mixed precision keeps 16 bytes per parameter whatever the compute
		// precision; fp32 training keeps 4+4+8.
		e.WeightsGiB = params * 2 / gib
		e.GradientsGiB = params * 2 / gib
		e.OptimizerGiB = params * 12 / gib
		if bytes == 4 {
			e.WeightsGiB, e.GradientsGiB, e.OptimizerGiB = params*4/gib, params*4/gib, params*8/gib
		}
		e.ActivationsGiB = activations(layers, hidden, ctx, batch)
		e.OverheadGiB = 0.1 * (e.WeightsGiB + e.GradientsGiB + e.OptimizerGiB)
	case WorkLoRA:
		frac := in.LoRAFraction
		if frac <= 0 || frac > 1 {
			frac = 0.01
		}
		trained := params * frac
		e.GradientsGiB = trained * 2 / gib
		e.OptimizerGiB = trained * 14 / gib // adapters' own weights ride with their optimizer state
		e.ActivationsGiB = checkpointedActivations(layers, hidden, ctx, batch)
		e.OverheadGiB = 0.1 * e.WeightsGiB
	}
	e.TotalGiB = e.WeightsGiB + e.KVCacheGiB + e.GradientsGiB + e.OptimizerGiB + e.ActivationsGiB + e.OverheadGiB
	return e, nil
}

func shape(params float64) (layers, hidden int) {
	l := math.Cbrt(params / 196608)
	layers = max(int(math.Round(l)), 1)
	hidden = max(int(math.Round(128*l/64))*64, 64)
	return layers, hidden
}

func activations(layers, hidden, ctx, batch int) float64 {
	return 34 * float64(ctx) * float64(batch) * float64(hidden) * float64(layers) / gib
}

// CardsNeeded is how many cards of vramGiB hold need while keeping the
// headroom share of each card free ("留一点余量更稳"). It is 0 when a card
// has no usable memory.
func CardsNeeded(needGiB float64, vramGiB int, headroom float64) int {
	usable := float64(vramGiB) * (1 - headroom)
	if usable <= 0 || needGiB <= 0 {
		return 0
	}
	return int(math.Ceil(needGiB/usable - 1e-9))
}

func checkpointedActivations(layers, hidden, ctx, batch int) float64 {
	tokens := float64(ctx) * float64(batch)
	return (2*tokens*float64(hidden)*float64(layers) + 34*tokens*float64(hidden)) / gib
}

// HoldsVRAM tells whether count cards of vramGiB hold need with the
// headroom share of each card kept free — the rule CardsNeeded sizes by, so
// that the count a form suggests and the warning it gives agree — and how
// many cards would. Without a need (none given) any count holds it.
func HoldsVRAM(needGiB float64, vramGiB, count int, headroom float64) (ok bool, needed int) {
	if needGiB <= 0 {
		return true, 0
	}
	needed = CardsNeeded(needGiB, vramGiB, headroom)
	return needed > 0 && count >= needed, needed
}
