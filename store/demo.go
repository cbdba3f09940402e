package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"
)

// DemoPassword is the password of the demo users (never of admin).
const DemoPassword = "cardhour-demo"

// SeedDemo fills an empty database with a small, realistic fleet: four card
// types at list prices, five hosts, 32 cards, three teams and their people,
// and the environment images a team would start from.
func (s *Store) SeedDemo(ctx context.Context, loc *time.Location) error {
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
	users := map[string]*User{}
	for _, p := range people {
		// Each runs GPU processes as their own login name.
		u, err := s.CreateUser(ctx, UserCreate{Username: p.username, DisplayName: p.name, Email: p.username + "@example.cn", Password: DemoPassword, Role: p.role,
			OSAccounts: []string{p.username}})
		if err != nil {
			return fmt.Errorf("demo user %s: %w", p.username, err)
		}
		if _, err := s.SetMembership(ctx, teamIDs[p.team], u.ID, p.teamRole); err != nil {
			return fmt.Errorf("demo membership %s: %w", p.username, err)
		}
		users[p.username] = u
	}
	return s.seedDemoWork(ctx, teamIDs, typeIDs, users, loc)
}

// seedDemoWork adds quotas, task baselines, a template and bookings, made
// through the same rules as real requests (so the demo shows nothing the
// portal would refuse).
func (s *Store) seedDemoWork(ctx context.Context, teamIDs, typeIDs []int64, users map[string]*User, loc *time.Location) error {
	admin, err := s.FindUserByUsername(ctx, "admin")
	if err != nil {
		return err
	}
	asUser := func(u *User) context.Context {
		return WithActor(ctx, Actor{UserID: u.ID, Username: u.Username})
	}
	now := s.now()
	day := 24 * time.Hour
	// Card types: 0 H800, 1 A800, 2 L40S, 3 RTX 4090. Teams: 0 LLM, 1 vision, 2 inference.
	quotas := []QuotaInput{
		{TeamID: teamIDs[0], CardTypeID: typeIDs[0], CardHours: 3000, MaxCards: 16, ValidFrom: now.Add(-30 * day), ExpiresAt: now.Add(60 * day), Note: "2026 Q4 预训练"},
		{TeamID: teamIDs[0], CardTypeID: typeIDs[2], CardHours: 400, MaxCards: 4, ValidFrom: now.Add(-30 * day), ExpiresAt: now.Add(12 * day), Note: "超参扫描"},
		{TeamID: teamIDs[1], CardTypeID: typeIDs[2], CardHours: 600, MaxCards: 4, ValidFrom: now.Add(-10 * day), ExpiresAt: now.Add(80 * day)},
		{TeamID: teamIDs[1], CardTypeID: typeIDs[3], CardHours: 300, MaxCards: 4, ValidFrom: now.Add(-10 * day), ExpiresAt: now.Add(80 * day)},
		{TeamID: teamIDs[2], CardTypeID: typeIDs[1], CardHours: 800, MaxCards: 6, ValidFrom: now.Add(-20 * day), ExpiresAt: now.Add(10 * day), Note: "评测与压测"},
		{TeamID: teamIDs[2], CardTypeID: typeIDs[3], CardHours: 200, MaxCards: 4, ValidFrom: now.Add(-20 * day), ExpiresAt: now.Add(70 * day)},
	}
	for _, q := range quotas {
		if _, err := s.CreateQuota(asUser(admin), q); err != nil {
			return fmt.Errorf("demo quota: %w", err)
		}
	}
	readyAt := now.Add(2 * day)
	tasks := []struct {
		user string
		in   TaskInput
	}{
		{"lihua", TaskInput{TeamID: teamIDs[0], Name: "7B 续训 第3轮", Priority: "core", EstimateCardHours: 1200, DataReadiness: "ready", VRAMGiB: 123, Precision: "bf16", CardTypeIDs: []int64{typeIDs[0]}, Notes: "全参续训，ZeRO-3，8×H800 为一组"}},
		{"lihua", TaskInput{TeamID: teamIDs[0], Name: "SFT 指令微调", Priority: "normal", EstimateCardHours: 160, DataReadiness: "partial", VRAMGiB: 60, Precision: "bf16", CardTypeIDs: []int64{typeIDs[0], typeIDs[1]}}},
		{"wangfang", TaskInput{TeamID: teamIDs[0], Name: "学习率扫描", Priority: "backfill", EstimateCardHours: 96, DataReadiness: "ready", VRAMGiB: 30, Precision: "bf16", CardTypeIDs: []int64{typeIDs[2]}, Notes: "闲时补位，随时可被核心任务抢占"}},
		{"zhangwei", TaskInput{TeamID: teamIDs[1], Name: "检测模型 v5", Priority: "core", EstimateCardHours: 300, DataReadiness: "ready", VRAMGiB: 36, Precision: "fp16", CardTypeIDs: []int64{typeIDs[2]}}},
		{"zhangwei", TaskInput{TeamID: teamIDs[1], Name: "分割数据增强实验", Priority: "normal", EstimateCardHours: 60, DataReadiness: "not_ready", DataReadyAt: &readyAt, VRAMGiB: 20, Precision: "fp16", CardTypeIDs: []int64{typeIDs[3]}}},
		{"liuyang", TaskInput{TeamID: teamIDs[2], Name: "评测集回归", Priority: "normal", EstimateCardHours: 120, DataReadiness: "ready", VRAMGiB: 70, Precision: "bf16", CardTypeIDs: []int64{typeIDs[1]}}},
		{"liuyang", TaskInput{TeamID: teamIDs[2], Name: "vLLM 压测", Priority: "backfill", EstimateCardHours: 40, DataReadiness: "ready", VRAMGiB: 20, Precision: "fp8", CardTypeIDs: []int64{typeIDs[3]}}},
	}
	taskIDs := make([]*Task, len(tasks))
	for i, t := range tasks {
		task, err := s.CreateTask(asUser(users[t.user]), t.in)
		if err != nil {
			return fmt.Errorf("demo task %s: %w", t.in.Name, err)
		}
		taskIDs[i] = task
	}
	hour := time.Hour
	untilTuesday := (int(time.Tuesday) - int(now.Weekday()) + 7) % 7
	if untilTuesday == 0 {
		untilTuesday = 7
	}
	nextTuesday := now.Truncate(day).Add(time.Duration(untilTuesday)*day + hour) // 09:00 in Beijing
	bookings := []struct {
		user        string
		task, ctype int
		count       int
		start, end  time.Time
	}{
		{"lihua", 0, 0, 8, now, now.Add(10 * hour)},
		{"wangfang", 0, 0, 8, nextTuesday, nextTuesday.Add(12 * hour)},
		{"lihua", 1, 0, 4, now.Add(26 * hour), now.Add(34 * hour)},
		{"wangfang", 2, 2, 2, now, now.Add(3 * hour)},
		{"zhangwei", 3, 2, 2, now, now.Add(6 * hour)},
		{"liuyang", 5, 1, 2, now.Add(2 * hour), now.Add(8 * hour)},
		{"liuyang", 6, 3, 2, now, now.Add(4 * hour)},
	}
	for _, b := range bookings {
		if _, err := s.CreateBooking(asUser(users[b.user]), BookingRequest{TaskID: taskIDs[b.task].ID, CardTypeID: typeIDs[b.ctype],
			Count: b.count, Start: b.start, End: b.end, Queue: true}); err != nil {
			return fmt.Errorf("demo booking for %s: %w", taskIDs[b.task].Name, err)
		}
	}
	if _, err := s.CreateTemplateFromTask(asUser(users["wangfang"]), TemplateInput{Name: "周末超参扫描 4×L40S 12h", TaskID: taskIDs[2].ID,
		CardTypeID: typeIDs[2], Count: 4, Duration: 12 * hour}); err != nil {
		return fmt.Errorf("demo template: %w", err)
	}
	return s.seedDemoHistory(ctx, taskIDs, typeIDs, users, admin, loc)
}

// demoUUID derives a stable uuid in nvidia-smi's format from host and index.
func demoUUID(host string, i int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", host, i)))
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
