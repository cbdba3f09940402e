package store

import (
	"context"
	"crypto/sha256"
	"fmt"
)

// DemoPassword is the password of the demo users (never of admin).
const DemoPassword = "cardhour-demo"

// SeedDemo fills an empty database with a small, realistic fleet: four card
// types at list prices, five hosts, 32 cards, three teams and their people,
// and the environment images a team would start from.
func (s *Store) SeedDemo(ctx context.Context) error {
	ctx = WithActor(ctx, Actor{Username: "demo"})
	types := []CardTypeInput{
		{Name: "NVIDIA H800 80GB", VRAMGiB: 80, TFLOPSFP32: 67, TFLOPSTF32: 494.7, TFLOPSBF16: 989.4, TFLOPSFP16: 989.4, TFLOPSFP8: 1978.9, TFLOPSINT8: 1978.9, PriceFen: 2200},
		{Name: "NVIDIA A800 80GB", VRAMGiB: 80, TFLOPSFP32: 19.5, TFLOPSTF32: 156, TFLOPSBF16: 312, TFLOPSFP16: 312, TFLOPSINT8: 624, PriceFen: 1200},
		{Name: "NVIDIA L40S 48GB", VRAMGiB: 48, TFLOPSFP32: 91.6, TFLOPSTF32: 183, TFLOPSBF16: 362, TFLOPSFP16: 362, TFLOPSFP8: 733, TFLOPSINT8: 733, PriceFen: 700},
		{Name: "NVIDIA GeForce RTX 4090 24GB", VRAMGiB: 24, TFLOPSFP32: 82.6, TFLOPSTF32: 82.6, TFLOPSBF16: 165.2, TFLOPSFP16: 165.2, TFLOPSFP8: 330.3, TFLOPSINT8: 660.6, PriceFen: 350},
	}
	typeIDs := make([]int64, len(types))
	for i, in := range types {
		t, err := s.CreateCardType(ctx, in)
		if err != nil {
			return fmt.Errorf("demo card type %s: %w", in.Name, err)
		}
		typeIDs[i] = t.ID
	}
	hosts := []struct {
		name, zone string
		typ, cards int
	}{
		{"gpu-bj-h800-01", "华北2-可用区A", 0, 8},
		{"gpu-bj-h800-02", "华北2-可用区A", 0, 8},
		{"gpu-sh-a800-01", "华东1-可用区B", 1, 8},
		{"gpu-gz-l40s-01", "华南1-可用区A", 2, 4},
		{"gpu-gz-4090-01", "华南1-可用区A", 3, 4},
	}
	for _, h := range hosts {
		host, err := s.CreateHost(ctx, HostInput{Name: h.name, Zone: h.zone})
		if err != nil {
			return fmt.Errorf("demo host %s: %w", h.name, err)
		}
		for i := 0; i < h.cards; i++ {
			status := CardActive
			if h.name == "gpu-sh-a800-01" && i == 7 {
				status = CardMaintenance
			}
			if _, err := s.CreateCard(ctx, CardInput{UUID: demoUUID(h.name, i), GPUIndex: i, HostID: host.ID, CardTypeID: typeIDs[h.typ], Status: status}); err != nil {
				return fmt.Errorf("demo card %s/%d: %w", h.name, i, err)
			}
		}
	}
	images := []ImageInput{
		{Name: "pytorch-2.4-cu124", Reference: "registry.example.cn/ml/pytorch:2.4.1-cuda12.4-cudnn9", CUDAVersion: "12.4", Frameworks: "PyTorch 2.4, Transformers 4.44, DeepSpeed 0.15", Description: "训练与微调通用镜像"},
		{Name: "vllm-0.6-cu124", Reference: "registry.example.cn/ml/vllm:0.6.3-cuda12.4", CUDAVersion: "12.4", Frameworks: "vLLM 0.6, PyTorch 2.4", Description: "大模型推理服务"},
		{Name: "megatron-core-0.8", Reference: "registry.example.cn/ml/megatron:core-0.8-cuda12.4", CUDAVersion: "12.4", Frameworks: "Megatron-Core 0.8, Transformer Engine 1.9", Description: "预训练，FP8 on H800"},
	}
	for _, in := range images {
		if _, err := s.CreateImage(ctx, in); err != nil {
			return fmt.Errorf("demo image %s: %w", in.Name, err)
		}
	}
	teams := []TeamInput{
		{Name: "大模型组", Description: "LLM 预训练与微调"},
		{Name: "视觉组", Description: "检测与分割模型"},
		{Name: "推理平台", Description: "在线推理与评测"},
	}
	teamIDs := make([]int64, len(teams))
	for i, in := range teams {
		t, err := s.CreateTeam(ctx, in)
		if err != nil {
			return fmt.Errorf("demo team %s: %w", in.Name, err)
		}
		teamIDs[i] = t.ID
	}
	people := []struct {
		username, name, role string
		team                 int
		teamRole             string
	}{
		{"wangfang", "王芳", RoleManager, 0, TeamRoleManager},
		{"lihua", "李华", RoleMember, 0, TeamRoleMember},
		{"zhangwei", "张伟", RoleMember, 1, TeamRoleMember},
		{"chenjing", "陈静", RoleManager, 1, TeamRoleManager},
		{"liuyang", "刘洋", RoleMember, 2, TeamRoleMember},
		{"zhaolei", "赵磊", RoleViewer, 2, TeamRoleViewer},
	}
	for _, p := range people {
		u, err := s.CreateUser(ctx, UserCreate{Username: p.username, DisplayName: p.name, Email: p.username + "@example.cn", Password: DemoPassword, Role: p.role})
		if err != nil {
			return fmt.Errorf("demo user %s: %w", p.username, err)
		}
		if _, err := s.SetMembership(ctx, teamIDs[p.team], u.ID, p.teamRole); err != nil {
			return fmt.Errorf("demo membership %s: %w", p.username, err)
		}
	}
	return nil
}

// demoUUID derives a stable uuid in nvidia-smi's format from host and index.
func demoUUID(host string, i int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", host, i)))
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
