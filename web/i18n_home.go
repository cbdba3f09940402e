package web

// homeMessages are the messages of the person's start page.
var homeMessages = map[string][2]string{
	"home.title":       {"概览", "Overview"},
	"home.welcome":     {"%s，你好", "Hello, %s"},
	"home.rules_title": {"取用守则", "House rules"},
	"home.rule1":       {"按需取用，波峰提前预约，用完早释放，闲时不占。", "Book on demand, reserve ahead for peaks, release early, hold nothing idle."},
	"home.rule2":       {"先按显存与精度选卡型：费用 = 卡时 × 单价，任务拆短、批处理排密。", "Choose the card by VRAM and precision first: cost = card-hours × price; keep jobs short and dense."},
	"home.rule3":       {"每个任务写清基线：优先级、卡时预估、数据就绪度；核心先跑，次要补位。", "Give every task a baseline: priority, card-hour estimate, data readiness; core first, secondary backfills."},
	"home.rule4":       {"单卡别压太满，显存留余量；额度到期提前半月续。", "Do not pack a card to the brim, leave VRAM headroom; renew quotas half a month before they expire."},
	"home.fleet":       {"卡型与价格", "Card types and prices"},

	"home.mine":           {"我的进行中与待开始预约", "My running and upcoming bookings"},
	"home.mine_none":      {"你没有进行中或待开始的预约。", "You have no running or upcoming bookings."},
	"home.all_bookings":   {"全部预约", "All bookings"},
	"home.ends_in":        {"剩 %s", "%s left"},
	"home.starts_in":      {"%s后开始", "starts in %s"},
	"home.dur_m":          {"%d 分钟", "%d min"},
	"home.dur_hm":         {"%d 小时 %d 分", "%d h %d min"},
	"home.dur_dh":         {"%d 天 %d 小时", "%d d %d h"},
	"home.quotas":         {"团队额度", "My teams' quotas"},
	"home.all_quotas":     {"全部额度", "All quotas"},
	"home.quotas_none":    {"你所在的团队没有生效中的额度。", "Your teams have no quota in force."},
	"home.quota_left":     {"剩 %s / %s 卡时", "%s of %s card-hours left"},
	"home.quota_expires":  {"%s 到期（%d 天后）", "expires %s (in %d days)"},
	"home.alerts":         {"我的预约上的告警（%d）", "Alerts on my bookings (%d)"},
	"home.since":          {"自 %s", "since %s"},
	"home.approvals":      {"待我审批", "Waiting for my approval"},
	"home.approvals_link": {"去审批 →", "Open approvals →"},
	"home.idle_today":     {"今日占而未用卡时", "Card-hours held idle today"},
	"home.idle_teams":     {"我管理的团队：%d 个", "Teams I manage: %d"},
	"home.fleet_line":     {"共 %d 张卡（在用 %d，维护 %d，退役 %d）· %d 种卡型 · %d 台主机 · %d 个团队", "%d cards (%d active, %d in maintenance, %d retired) · %d card types · %d hosts · %d teams"},
}
