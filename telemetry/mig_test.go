package telemetry_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"cardhour/telemetry"
)

func optInt(p *int) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func listText(gpus []telemetry.ListedGPU) string {
	var out []string
	for _, g := range gpus {
		out = append(out, fmt.Sprintf("GPU %d %s %s", g.Index, g.Name, g.UUID))
		for _, m := range g.MIG {
			out = append(out, fmt.Sprintf("  %d %s %s %s gi %s ci %s", m.Device, m.Profile, m.GPUProfile, m.UUID, optInt(m.GPUInstance), optInt(m.ComputeInstance)))
		}
	}
	return strings.Join(out, "\n")
}

func TestParseMIGList(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{h200List, `GPU 0 NVIDIA H200 GPU-00000000-0000-0000-0000-000000000000
  0 1c.3g.71gb 3g.71gb MIG-00000000-0000-0000-0000-000000000000 gi - ci -
  1 2c.3g.71gb 3g.71gb MIG-00000001-0000-0000-0000-000000000001 gi - ci -
  2 2g.35gb 2g.35gb MIG-00000002-0000-0000-0000-000000000002 gi - ci -
  3 1g.18gb 1g.18gb MIG-00000003-0000-0000-0000-000000000003 gi - ci -
  4 1g.18gb 1g.18gb MIG-00000004-0000-0000-0000-000000000004 gi - ci -`},
		// Driver 450: the MIG UUID names the GPU and compute instances.
		{a100OldList, `GPU 0 A100-SXM4-40GB GPU-a810a1fc-9f46-0e6f-5cef-bf34c2248e12
  0 3g.20gb 3g.20gb MIG-GPU-a810a1fc-9f46-0e6f-5cef-bf34c2248e12/1/0 gi 1 ci 0
  1 3g.20gb 3g.20gb MIG-GPU-a810a1fc-9f46-0e6f-5cef-bf34c2248e12/2/0 gi 2 ci 0
GPU 1 A100-SXM4-40GB GPU-604c7a18-e7d0-02e0-723a-7578be840651
  0 3g.20gb 3g.20gb MIG-GPU-604c7a18-e7d0-02e0-723a-7578be840651/1/0 gi 1 ci 0
  1 3g.20gb 3g.20gb MIG-GPU-604c7a18-e7d0-02e0-723a-7578be840651/2/0 gi 2 ci 0
GPU 2 A100-SXM4-40GB GPU-213c841d-7181-629b-9a20-5c80fbd75ad9
  0 3g.20gb 3g.20gb MIG-GPU-213c841d-7181-629b-9a20-5c80fbd75ad9/1/0 gi 1 ci 0
  1 3g.20gb 3g.20gb MIG-GPU-213c841d-7181-629b-9a20-5c80fbd75ad9/2/0 gi 2 ci 0
GPU 3 A100-SXM4-40GB GPU-8345bdf0-6a9c-e1c1-5994-9e656aed3abc
  0 3g.20gb 3g.20gb MIG-GPU-8345bdf0-6a9c-e1c1-5994-9e656aed3abc/1/0 gi 1 ci 0`},
	} {
		got, bad := telemetry.ParseMIGList(bytes.NewReader(recording(t, c.file)))
		if len(bad) != 0 {
			t.Errorf("%s: skipped %v", c.file, bad)
		}
		if g := listText(got); g != c.want {
			t.Errorf("%s:\n got\n%s\nwant\n%s", c.file, g, c.want)
		}
	}
	got, bad := telemetry.ParseMIGList(bytes.NewReader(recording(t, a100SevenList)))
	if len(bad) != 0 || len(got) != 1 || len(got[0].MIG) != 7 || got[0].MIG[6].GPUProfile != "1g.10gb" || got[0].MIG[6].Device != 6 ||
		got[0].Name != "NVIDIA A100-SXM4-80GB" {
		t.Errorf("%+v %v", got, bad)
	}
	// Lines that are neither are reported, not guessed at.
	got, bad = telemetry.ParseMIGList(strings.NewReader("  MIG 1g.10gb Device 0: (UUID: MIG-feb88891-0321-5fef-9c87-d4af3b54259e)\nNo devices were found\n"))
	if len(got) != 0 || len(bad) != 2 || bad[0].Line != 1 || bad[1].Line != 2 {
		t.Errorf("%+v %v", got, bad)
	}
}

func TestParseQueryMIGReadsTheRecordedH200(t *testing.T) {
	got, bad := telemetry.ParseQueryMIG(bytes.NewReader(recording(t, h200Query)))
	if len(bad) != 0 || len(got) != 1 {
		t.Fatalf("%+v %v", got, bad)
	}
	g := got[0]
	if g.BusID != "0000:83:00.0" || g.UUID != maskedUUID || !g.MIG {
		t.Errorf("gpu %+v", g)
	}
	var devs []string
	for _, d := range g.Devices {
		devs = append(devs, fmt.Sprintf("%d gi %d ci %d %s/%s", d.Index, d.GPUInstance, d.ComputeInstance, show(d.MemUsedMiB), show(d.MemTotalMiB)))
	}
	want := "0 gi 2 ci 0 16925/71424; 1 gi 2 ci 1 16925/71424; 2 gi 3 ci 0 17/33280; 3 gi 9 ci 0 9/16384; 4 gi 10 ci 0 9/16384"
	if strings.Join(devs, "; ") != want {
		t.Errorf("devices\n got %s\nwant %s", strings.Join(devs, "; "), want)
	}
	var procs []string
	for _, p := range g.Processes {
		procs = append(procs, fmt.Sprintf("%d %s %s gi %s ci %s", p.PID, p.Name, show(p.MemMiB), optInt(p.GPUInstance), optInt(p.ComputeInstance)))
	}
	want = "12249 /root/tools/memhog 2194 gi 2 ci 1; 12250 /root/tools/memhog 1170 gi 2 ci 1; 12267 ./gpu_burn 13526 gi 2 ci 1"
	if strings.Join(procs, "; ") != want {
		t.Errorf("processes\n got %s\nwant %s", strings.Join(procs, "; "), want)
	}
}

func TestAttachMIGJoinsListQueryAndProcesses(t *testing.T) {
	res, err := telemetry.ParsePush(body(recording(t, h200LoadGPU), recording(t, h200LoadApps)), "h", at)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := telemetry.ParseMIGList(bytes.NewReader(recording(t, h200List)))
	query, _ := telemetry.ParseQueryMIG(bytes.NewReader(recording(t, h200Query)))
	telemetry.AttachMIG(res.Samples, list, query)
	s := res.Samples[0]
	// GPU instance 2 has two compute instances (1c. and 2c.3g.71gb): one instance.
	if got, want := migText(s), "2 3g.71gb 16925/71424 procs 3; 3 2g.35gb 17/33280 procs 0; 9 1g.18gb 9/16384 procs 0; 10 1g.18gb 9/16384 procs 0"; got != want {
		t.Errorf("instances\n got %s\nwant %s", got, want)
	}
	for _, p := range s.Processes {
		if optInt(p.GPUInstance) != "2" {
			t.Errorf("process %d in instance %s", p.PID, optInt(p.GPUInstance))
		}
	}
	if s.Instances[0].UUID != "MIG-00000000-0000-0000-0000-000000000000" {
		t.Errorf("instance uuid %q", s.Instances[0].UUID)
	}
	// A card not in MIG mode is left alone.
	h100, _ := telemetry.ParsePush(recording(t, h100LoadGPU), "h", at)
	telemetry.AttachMIG(h100.Samples, list, query)
	if h100.Samples[0].MIG || len(h100.Samples[0].Instances) != 0 {
		t.Errorf("%+v", h100.Samples[0])
	}
}

func migText(s telemetry.Sample) string {
	var out []string
	for _, in := range s.Instances {
		out = append(out, fmt.Sprintf("%d %s %s/%s procs %d", in.ID, in.Profile, show(in.MemUsedMiB), show(in.MemTotalMiB), in.Processes))
	}
	return strings.Join(out, "; ")
}
