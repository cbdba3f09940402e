package schedule_test

import (
	"math"
	"testing"

	"cardhour/schedule"
)

func near(got, want, tolerance float64) bool {
	return math.Abs(got-want) <= tolerance*want
}

// Published rules of thumb the estimator must reproduce.
func TestEstimateVRAMMatchesRulesOfThumb(t *testing.T) {
	cases := []struct {
		name     string
		in       schedule.VRAMInput
		wantGiB  float64
		tolerate float64
	}{
		// "M = P × 4B / (32/Q) × 1.2": 70B at 16 bit ≈ 168 GB ≈ 156 GiB before the KV cache.
		{"70B fp16 inference weights + 20 %", schedule.VRAMInput{ParamsB: 70, Precision: "fp16", Workload: schedule.WorkInference, Batch: 1, Context: 1}, 156.5, 0.02},
		// 7B at 16 bit: 14 GB of weights, ≈ 15.6 GiB with overhead, plus
		// Llama-2-7B's 0.5 MiB per token of KV cache: 4096 tokens ≈ 2 GiB.
		{"7B fp16 inference 4k context", schedule.VRAMInput{ParamsB: 7, Precision: "fp16", Workload: schedule.WorkInference, Batch: 1, Context: 4096, Layers: 32, Hidden: 4096}, 17.65, 0.02},
		// Full fine-tune with Adam: 16 bytes per parameter → 7B ≈ 104 GiB
		// before activations; with 1×2048 tokens the activations add ≈ 8.5 GiB.
		{"7B full fine-tune Adam", schedule.VRAMInput{ParamsB: 7, Precision: "bf16", Workload: schedule.WorkFull, Batch: 1, Context: 2048, Layers: 32, Hidden: 4096}, 123.2, 0.02},
		// QLoRA: a 65B model in 4 bit fine-tunes on one 48 GB card (44.7 GiB);
		// the paper reports about 41 GB in use.
		{"65B int4 LoRA fits 48 GB", schedule.VRAMInput{ParamsB: 65, Precision: "int4", Workload: schedule.WorkLoRA, Batch: 1, Context: 512, LoRAFraction: 0.005}, 38.8, 0.05},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := schedule.EstimateVRAM(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if !near(got.TotalGiB, c.wantGiB, c.tolerate) {
				t.Errorf("total = %.2f GiB, want %.2f ± %.0f %% (parts %+v)", got.TotalGiB, c.wantGiB, c.tolerate*100, got)
			}
		})
	}
}

func TestShapeDerivedFromParameterCountIsLlamaLike(t *testing.T) {
	for _, c := range []struct {
		params         float64
		layers, hidden int
	}{{7, 33, 4224}, {13, 40, 5184}} {
		got, err := schedule.EstimateVRAM(schedule.VRAMInput{ParamsB: c.params, Precision: "bf16", Workload: schedule.WorkInference})
		if err != nil {
			t.Fatal(err)
		}
		if got.Layers != c.layers || got.Hidden != c.hidden {
			t.Errorf("%gB: shape %d×%d, want %d×%d", c.params, got.Layers, got.Hidden, c.layers, c.hidden)
		}
	}
}

func TestEstimateVRAMRefusesNonsense(t *testing.T) {
	bad := []schedule.VRAMInput{
		{ParamsB: 0, Precision: "bf16", Workload: schedule.WorkInference},
		{ParamsB: 7, Precision: "fp4x", Workload: schedule.WorkInference},
		{ParamsB: 7, Precision: "bf16", Workload: "dreaming"},
		{ParamsB: 7, Precision: "bf16", Workload: schedule.WorkInference, Batch: -1},
	}
	for _, in := range bad {
		if _, err := schedule.EstimateVRAM(in); err == nil {
			t.Errorf("accepted %+v", in)
		}
	}
}

func TestCardsNeededLeavesHeadroom(t *testing.T) {
	cases := []struct {
		need     float64
		vram     int
		headroom float64
		want     int
	}{
		{72, 80, 0.10, 1}, // exactly 90 % of one card
		{73, 80, 0.10, 2}, // would pack it past 90 %
		{156.5, 80, 0.10, 3},
		{20, 24, 0.10, 1},
		{22, 24, 0.10, 2},
		{0, 80, 0.10, 0},
		{10, 80, 1, 0},
	}
	for _, c := range cases {
		if got := schedule.CardsNeeded(c.need, c.vram, c.headroom); got != c.want {
			t.Errorf("CardsNeeded(%v, %d, %v) = %d, want %d", c.need, c.vram, c.headroom, got, c.want)
		}
	}
}

func TestHoldsVRAM(t *testing.T) {
	cases := []struct {
		name     string
		need     float64
		vram     int
		count    int
		headroom float64
		ok       bool
		needed   int
	}{
		{"one 80 GiB card does not hold 133 GiB", 133, 80, 1, 0.1, false, 2},
		{"two 80 GiB cards hold 133 GiB with a tenth of each kept free", 133, 80, 2, 0.1, true, 2},
		{"two 80 GiB cards do not hold 150 GiB with a tenth of each kept free", 150, 80, 2, 0.1, false, 3},
		{"two 80 GiB cards hold 150 GiB without headroom", 150, 80, 2, 0, true, 2},
		{"more cards than needed hold it", 60, 80, 4, 0.1, true, 1},
		{"no need is held by any count", 0, 24, 1, 0.1, true, 0},
		{"a card with no usable memory holds nothing", 10, 0, 8, 0.1, false, 0},
	}
	for _, c := range cases {
		ok, needed := schedule.HoldsVRAM(c.need, c.vram, c.count, c.headroom)
		if ok != c.ok || needed != c.needed {
			t.Errorf("%s: HoldsVRAM(%v, %d, %d, %v) = %v, %d; want %v, %d", c.name, c.need, c.vram, c.count, c.headroom, ok, needed, c.ok, c.needed)
		}
	}
}
