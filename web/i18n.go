package web

import (
	"fmt"
	"strconv"
	"strings"
)

// Languages the portal speaks; the first is the default.
const (
	LangZH = "zh-CN"
	LangEN = "en"
)

// NormalizeLang maps an Accept-Language or cookie value to a supported one.
func NormalizeLang(v, def string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	switch {
	case v == "":
		return def
	case strings.HasPrefix(v, "zh"):
		return LangZH
	case strings.HasPrefix(v, "en"):
		return LangEN
	}
	return def
}

// AcceptLanguage picks the supported language a browser's Accept-Language
// header prefers, by its q-values: zh, zh-CN, zh-Hans (any zh) is zh-CN,
// en and en-* are en; tags the portal does not speak are passed over, and
// def answers when none is left (no header, "fr", "*").
func AcceptLanguage(header, def string) string {
	best, bestQ := def, 0.0
	for _, part := range strings.Split(header, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if k, v, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.TrimSpace(k) == "q" {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				continue
			}
			q = f
		}
		tag = strings.ToLower(strings.TrimSpace(tag))
		lang := ""
		switch {
		case tag == "zh" || strings.HasPrefix(tag, "zh-"):
			lang = LangZH
		case tag == "en" || strings.HasPrefix(tag, "en-"):
			lang = LangEN
		}
		// The first of equal q-values wins, as the header lists them.
		if lang != "" && q > bestQ {
			best, bestQ = lang, q
		}
	}
	return best
}

// T translates key into lang, filling %-verbs from args. A missing key shows
// itself so the gap is visible in tests and screenshots, never a blank.
func T(lang, key string, args ...any) string {
	pair, ok := catalogue[key]
	if !ok {
		return key
	}
	msg := pair[0]
	if lang == LangEN {
		msg = pair[1]
	}
	if len(args) > 0 {
		return fmt.Sprintf(msg, args...)
	}
	return msg
}

// Note is a booking's state note in lang: key with its args, or "" for a
// booking without one.
func Note(lang, key string, args []any) string {
	if key == "" {
		return ""
	}
	return T(lang, key, args...)
}

// HasKey tells whether the catalogue knows key.
func HasKey(key string) bool {
	_, ok := catalogue[key]
	return ok
}

// Keys lists every catalogue key, for completeness tests.
func Keys() []string {
	out := make([]string, 0, len(catalogue))
	for k := range catalogue {
		out = append(out, k)
	}
	return out
}

// catalogue holds each message as {zh-CN, en}; keeping the pair on one line
// makes a missing translation impossible. Each area keeps its messages in
// its own file; a key defined twice is reported by DuplicateKeys.
var catalogue, duplicateKeys = merge(coreMessages, bookingMessages, planningMessages, apiMessages, boardMessages, ledgerMessages, filesMessages, notifyMessages, approvalsMessages, quotaMessages, homeMessages, listsMessages, auditMessages, directoryMessages, loginMessages)

func merge(parts ...map[string][2]string) (map[string][2]string, []string) {
	out := map[string][2]string{}
	var dups []string
	for _, p := range parts {
		for k, v := range p {
			if _, ok := out[k]; ok {
				dups = append(dups, k)
			}
			out[k] = v
		}
	}
	return out, dups
}

// DuplicateKeys lists keys defined in more than one area file.
func DuplicateKeys() []string { return duplicateKeys }

var coreMessages = map[string][2]string{
	"app.name":    {"卡时", "cardhour"},
	"app.tagline": {"GPU 算力按需取用", "GPU compute on demand"},

	"nav.booking":  {"预约", "Booking"},
	"nav.board":    {"看板", "Board"},
	"nav.ledger":   {"台账", "Ledger"},
	"nav.reports":  {"报表", "Reports"},
	"nav.admin":    {"管理", "Admin"},
	"nav.account":  {"账户", "Account"},
	"nav.logout":   {"退出", "Log out"},
	"nav.login":    {"登录", "Log in"},
	"nav.home":     {"首页", "Home"},
	"nav.language": {"English", "中文"},
	"nav.skip":     {"跳到正文", "Skip to content"},
	"nav.menu":     {"菜单", "Menu"},
	"nav.sections": {"栏目", "Sections"},

	"admin.title":          {"管理", "Administration"},
	"admin.cardtypes":      {"卡型", "Card types"},
	"admin.hosts":          {"主机", "Hosts"},
	"admin.cards":          {"GPU 卡", "Cards"},
	"admin.images":         {"环境镜像", "Environment images"},
	"admin.teams":          {"团队", "Teams"},
	"admin.users":          {"用户", "Users"},
	"admin.audit":          {"审计日志", "Audit log"},
	"admin.tokens":         {"API 令牌", "API tokens"},
	"admin.inventory":      {"资源清单", "Inventory"},
	"admin.people":         {"人员与权限", "People and permissions"},
	"admin.intro":          {"卡型、主机、GPU 卡与镜像是预约的基础；权限写清，不随意外发。", "Card types, hosts, cards and images are what bookings stand on; permissions are written down, never handed out casually."},
	"admin.no_rows":        {"暂无记录。", "Nothing here yet."},
	"admin.add":            {"新增", "Add"},
	"cardtype.add":         {"新增卡型", "Add a card type"},
	"card.add":             {"新增 GPU 卡", "Add a card"},
	"host.add":             {"新增主机", "Add a host"},
	"image.add":            {"新增环境镜像", "Add an image"},
	"team.add":             {"新增团队", "Add a team"},
	"user.add":             {"新增用户", "Add a user"},
	"admin.save":           {"保存", "Save"},
	"admin.edit":           {"编辑", "Edit"},
	"admin.delete":         {"删除", "Delete"},
	"admin.cancel":         {"取消", "Cancel"},
	"admin.actions":        {"操作", "Actions"},
	"admin.created":        {"已创建：%s", "Created: %s"},
	"admin.updated":        {"已保存：%s", "Saved: %s"},
	"admin.deleted":        {"已删除：%s", "Deleted: %s"},
	"admin.confirm_delete": {"确定删除“%s”吗？此操作会记入审计日志。", "Delete “%s”? The change is recorded in the audit log."},
	"admin.count":          {"共 %d 项", "%d in all"},
	"admin.all":            {"全部", "All"},

	"cardtype.name":        {"型号", "Model"},
	"cardtype.vram":        {"显存 (GiB)", "VRAM (GiB)"},
	"cardtype.price":       {"单价 (元/卡时)", "Price (yuan per card-hour)"},
	"cardtype.tflops":      {"稠密算力 (TFLOPS)", "Dense TFLOPS"},
	"cardtype.cards":       {"卡数", "Cards"},
	"cardtype.help_name":   {"例如 NVIDIA H800 80GB", "e.g. NVIDIA H800 80GB"},
	"cardtype.help_tflops": {"不支持的精度填 0。", "Leave 0 for precisions the card does not support."},
	"cardtype.help_price":  {"按卡时计费：费用 = 卡时 × 单价。", "Billed by the card-hour: cost = card-hours × price."},

	"host.name":      {"主机名", "Host name"},
	"host.zone":      {"可用区", "Zone"},
	"host.help_name": {"遥测上报按主机名匹配，只用字母、数字、点、下划线和连字符。", "Telemetry reports match on the host name; use letters, digits, dots, underscores and hyphens only."},

	"card.uuid":               {"UUID", "UUID"},
	"card.index":              {"序号", "Index"},
	"card.host":               {"主机", "Host"},
	"card.type":               {"卡型", "Card type"},
	"card.status":             {"状态", "Status"},
	"card.status.active":      {"在用", "Active"},
	"card.status.maintenance": {"维护", "Maintenance"},
	"card.status.retired":     {"退役", "Retired"},
	"card.status.fault":       {"故障", "Fault"},
	"card.clear_fault":        {"排除故障", "Clear fault"},
	"card.fault_cleared":      {"%s 已恢复，可以再被预约。", "%s is back in service and can be booked again."},
	"card.not_faulty":         {"这张卡没有故障标记。", "This card is not marked faulty."},
	"card.help_uuid":          {"取自 nvidia-smi -L，例如 GPU-5a3c…；序号可能随重启变化，以 UUID 为准。", "From nvidia-smi -L, e.g. GPU-5a3c…; the index can change at boot, the UUID does not."},
	"card.choose":             {"请选择", "Choose"},
	"card.retire":             {"退役", "Retire"},
	"card.confirm_retire":     {"确定将“%s”退役吗？退役后不能再预约，历史记录保留。", "Retire “%s”? It can no longer be booked; its history is kept."},
	"card.retired_flash":      {"已退役：%s", "Retired: %s"},

	"image.name":           {"名称", "Name"},
	"image.reference":      {"镜像地址", "Reference"},
	"image.cuda":           {"CUDA 版本", "CUDA version"},
	"image.frameworks":     {"框架", "Frameworks"},
	"image.description":    {"说明", "Description"},
	"image.help_reference": {"拉取地址，例如 registry.example.cn/ml/pytorch:2.4.1-cuda12.4", "Pull reference, e.g. registry.example.cn/ml/pytorch:2.4.1-cuda12.4"},

	"team.name":                   {"团队名", "Team name"},
	"team.requires_approval":      {"预约需经理审批", "Bookings need a manager's approval"},
	"team.requires_approval_help": {"开启后，成员的预约先进入待审批，经理批准后才分配卡。", "When on, members' bookings wait until a team manager approves them; cards are assigned then."},
	"team.description":            {"说明", "Description"},
	"team.members":                {"成员", "Members"},
	"team.add_member":             {"添加成员", "Add member"},
	"team.remove":                 {"移出", "Remove"},
	"team.role":                   {"团队角色", "Team role"},
	"team.user":                   {"用户", "User"},
	"team.change_role":            {"修改", "Change"},
	"team.confirm_remove":         {"确定将 %s 移出“%s”吗？", "Remove %s from “%s”?"},
	"team.member_saved":           {"已保存成员：%s", "Member saved: %s"},
	"team.member_removed":         {"已移出成员：%s", "Member removed: %s"},

	"user.username":            {"用户名", "Username"},
	"user.display_name":        {"显示名", "Display name"},
	"user.email":               {"邮箱", "Email"},
	"user.password":            {"密码", "Password"},
	"user.role":                {"角色", "Role"},
	"user.disabled":            {"已停用", "Disabled"},
	"user.active":              {"正常", "Active"},
	"user.teams":               {"所属团队", "Teams"},
	"user.new_password":        {"新密码", "New password"},
	"user.reset_password_help": {"留空则不修改密码。", "Leave empty to keep the password."},
	"user.status":              {"状态", "Status"},
	"user.help_username":       {"登录用，2–64 位小写字母、数字、点、下划线或连字符。", "For logging in: 2–64 lowercase letters, digits, dots, underscores or hyphens."},
	"user.help_password":       {"至少 8 位；用户可在“我的账户”中自行修改。", "At least 8 characters; the user can change it under My account."},

	"role.admin":   {"管理员", "Admin"},
	"role.manager": {"经理", "Manager"},
	"role.member":  {"成员", "Member"},
	"role.viewer":  {"只读", "Viewer"},

	"audit.at":      {"时间", "Time"},
	"audit.actor":   {"操作人", "Actor"},
	"audit.action":  {"动作", "Action"},
	"audit.entity":  {"对象", "Object"},
	"audit.summary": {"摘要", "Summary"},
	"audit.before":  {"变更前", "Before"},
	"audit.after":   {"变更后", "After"},
	"audit.ip":      {"来源 IP", "Source IP"},
	"audit.all":     {"全部对象", "All objects"},
	"audit.filter":  {"筛选", "Filter"},
	"pager.prev":    {"上一页", "Previous"},
	"pager.next":    {"下一页", "Next"},
	"audit.changes": {"变更内容", "Changes"},
	"audit.show":    {"查看", "Show"},
	"pager.pages":   {"分页", "Pages"},
	"audit.page_of": {"第 %d / %d 页", "Page %d of %d"},

	"entity.api_token":  {"API 令牌", "API token"},
	"entity.card":       {"GPU 卡", "Card"},
	"entity.card_type":  {"卡型", "Card type"},
	"entity.host":       {"主机", "Host"},
	"entity.image":      {"环境镜像", "Image"},
	"entity.membership": {"团队成员", "Membership"},
	"entity.team":       {"团队", "Team"},
	"entity.user":       {"用户", "User"},

	"login.title":    {"登录卡时", "Log in to cardhour"},
	"login.username": {"用户名", "Username"},
	"login.password": {"密码", "Password"},
	"login.submit":   {"登录", "Log in"},
	"login.lead":     {"按需取用，闲时不占：先列任务与卡时，再按节奏取用。", "Take compute on demand and hold nothing idle: list tasks and card-hours first, then book to the rhythm."},

	"account.title":                  {"我的账户", "My account"},
	"account.change_password":        {"修改密码", "Change password"},
	"account.current_password":       {"当前密码", "Current password"},
	"account.new_password":           {"新密码（至少 8 位）", "New password (at least 8 characters)"},
	"account.password_changed":       {"密码已修改：其他登录已退出，你的 API 令牌已全部吊销（需要的请重新生成）。", "Password changed: your other sessions were logged out and your API tokens revoked (create new ones where you need them)."},
	"account.tokens":                 {"API 令牌", "API tokens"},
	"account.token_name":             {"令牌名称", "Token name"},
	"account.token_prefix":           {"前缀", "Prefix"},
	"account.token_create":           {"生成令牌", "Create token"},
	"account.token_created":          {"新令牌只显示这一次，请立即复制保存：", "The new token is shown this once; copy it now:"},
	"account.token_revoke":           {"吊销", "Revoke"},
	"account.token_revoked":          {"已吊销", "Revoked"},
	"account.token_last_used":        {"最近使用", "Last used"},
	"account.token_never":            {"从未", "Never"},
	"account.tokens_revoke_all":      {"吊销我的全部令牌", "Revoke all my tokens"},
	"account.tokens_revoke_all_help": {"令牌可能泄露、又不知道是哪一个时用：所有用它们调用 API 的脚本都会立即收到 401。修改密码时也会全部吊销。", "For a token that may have leaked when you do not know which: every script calling the API with one gets 401 at once. Changing your password revokes them all too."},
	"account.tokens_revoke_all_q":    {"吊销你的全部 API 令牌？用它们的脚本将立即无法调用 API。", "Revoke all your API tokens? Scripts using them stop working at once."},
	"account.tokens_revoked_all":     {"已吊销你的 %d 个 API 令牌。", "Revoked %d of your API tokens."},
	"account.token_help":             {"调用 /api/v1 时放在请求头：Authorization: Bearer <令牌>。", "Send it to /api/v1 as the header Authorization: Bearer <token>."},

	"section.coming":        {"该模块随后续版本上线；当前可查看资源清单。", "This module arrives in a later release; the inventory is available now."},
	"board.inventory_title": {"资源分布", "Fleet layout"},

	"form.required":   {"必填", "required"},
	"form.has_errors": {"请修正标出的字段后再提交。", "Please correct the marked fields and submit again."},

	"field.required":            {"此项必填。", "This field is required."},
	"field.too_long":            {"最多 %d 个字符。", "At most %d characters."},
	"field.limit_range":         {"每页条数须在 1 到 500 之间。", "The page size must be from 1 to 500."},
	"field.offset_range":        {"偏移量不能为负数。", "The offset cannot be negative."},
	"field.period_invalid":      {"结束时间须晚于开始时间。", "The end must be after the start."},
	"field.hours_range":         {"小时数须大于 0。", "The hours must be more than 0."},
	"user.os_accounts":          {"系统账号", "OS accounts"},
	"user.os_accounts_hint":     {"此人运行 GPU 进程所用的系统账号（逗号分隔），用来辨认卡上的进程是不是本组的。", "The OS accounts this person runs GPU processes as (comma-separated): how a card's processes are told to be their team's."},
	"user.os_account_invalid":   {"“%v”不是有效的系统账号：以小写字母或下划线开头，只含小写字母、数字、下划线、点和横线，最多 32 个字符。", "“%v” is no OS account: it starts with a lowercase letter or underscore and has lowercase letters, digits, underscores, dots and dashes, at most 32 characters."},
	"user.os_accounts_too_many": {"一个人最多填 %v 个系统账号。", "At most %v OS accounts per person."},
	"user.os_accounts_too_long": {"系统账号加起来最多 %v 个字符。", "The OS accounts together are at most %v characters."},
	"field.number":              {"请输入数字。", "Enter a number."},
	"field.integer":             {"请输入整数。", "Enter a whole number."},

	"cardtype.name_required": {"请填写型号。", "Enter the model name."},
	"cardtype.name_taken":    {"已有同名卡型。", "A card type with this name exists."},
	"cardtype.not_found":     {"卡型不存在。", "Card type not found."},
	"cardtype.price_range":   {"单价须大于 %s 且不超过 %s 元/卡时，最多两位小数。", "The price must be above %s and at most %s yuan per card-hour, with at most two decimals."},
	"cardtype.tflops_none":   {"至少填写一种精度的算力。", "Give the TFLOPS of at least one precision."},
	"cardtype.tflops_range":  {"算力须在 %s 到 %s TFLOPS 之间。", "TFLOPS must be between %s and %s."},
	"cardtype.vram_range":    {"显存须为 %s 到 %s GiB 的整数。", "VRAM must be a whole number from %s to %s GiB."},
	"cardtype.in_use":        {"仍有 GPU 卡属于此卡型，不能删除。", "Cards of this type exist; it cannot be deleted."},

	"host.name_invalid": {"主机名只能包含字母、数字、点、下划线和连字符。", "Host names may contain letters, digits, dots, underscores and hyphens only."},
	"host.name_taken":   {"已有同名主机。", "A host with this name exists."},
	"host.not_found":    {"主机不存在。", "Host not found."},
	"host.in_use":       {"主机上仍有 GPU 卡，不能删除。", "The host still carries cards; it cannot be deleted."},

	"card.has_bookings":          {"这张卡有过预约，不能删除，只能退役。", "This card has bookings; it cannot be deleted, only retired."},
	"card.index_range":           {"序号须为 %s 到 %s 的整数。", "The index must be a whole number from %s to %s."},
	"card.not_found":             {"GPU 卡不存在。", "Card not found."},
	"card.status_invalid":        {"状态须为在用、维护或退役。", "The status must be active, maintenance or retired."},
	"card.status_filter_invalid": {"状态须为在用、维护、退役或故障。", "The status must be active, maintenance, retired or fault."},
	"card.fault_kept":            {"故障卡只能通过“排除故障”恢复在用（GPU 卡列表中该卡的按钮）；也可以把它转为维护或退役。", "A faulty card returns to service only through “Clear fault” (the button on its row in the card list); it may also be sent to maintenance or retired."},
	"card.uuid_invalid":          {"UUID 格式应为 GPU-…（nvidia-smi -L 所示）。", "The UUID must look like GPU-… (as nvidia-smi -L prints it)."},
	"card.uuid_taken":            {"已有相同 UUID 的卡。", "A card with this UUID exists."},
	"card.ref_conflict":          {"名称与编号指向不同的记录。", "The name and the id point to different records."},

	"image.in_use":            {"镜像仍被使用，不能删除。", "The image is in use; it cannot be deleted."},
	"image.name_taken":        {"已有同名镜像。", "An image with this name exists."},
	"image.not_found":         {"镜像不存在。", "Image not found."},
	"image.reference_invalid": {"镜像地址不能含空格。", "The reference may not contain spaces."},

	"team.in_use":     {"团队仍有关联记录，不能删除。", "The team still has records; it cannot be deleted."},
	"team.name_taken": {"已有同名团队。", "A team with this name exists."},
	"team.not_found":  {"团队不存在。", "Team not found."},

	"membership.not_found":    {"该用户不在此团队。", "The user is not in this team."},
	"membership.role_invalid": {"团队角色须为经理、成员或只读。", "The team role must be manager, member or viewer."},

	"token.kind_invalid": {"令牌类型无效。", "Invalid token kind."},
	"token.not_found":    {"令牌不存在。", "Token not found."},

	"user.current_password_wrong": {"当前密码不正确。", "The current password is wrong."},
	"user.email_invalid":          {"邮箱格式不正确。", "This is not an email address."},
	"user.last_admin":             {"这是最后一个可用的管理员，不能停用或降级。", "This is the last active admin; it cannot be disabled or demoted."},
	"user.not_found":              {"用户不存在。", "User not found."},
	"user.password_long":          {"密码不能超过 72 个字节。", "The password may be at most 72 bytes."},
	"user.password_required":      {"请填写密码。", "Enter a password."},
	"user.password_short":         {"密码至少 8 位。", "The password needs at least 8 characters."},
	"user.role_invalid":           {"角色须为管理员、经理、成员或只读。", "The role must be admin, manager, member or viewer."},
	"user.username_invalid":       {"用户名为 2–64 位小写字母、数字、点、下划线或连字符。", "Usernames are 2–64 lowercase letters, digits, dots, underscores or hyphens."},
	"user.username_taken":         {"用户名已被占用。", "This username is taken."},

	"auth.bad_credentials": {"用户名或密码不正确。", "Wrong username or password."},
	"auth.disabled":        {"账户已停用。", "This account is disabled."},
	"auth.session_expired": {"登录已过期，请重新登录。", "Your session has expired; please log in again."},
	"auth.token_invalid":   {"API 令牌无效或已吊销。", "The API token is invalid or revoked."},
	"auth.required":        {"请先登录。", "Please log in."},
	"auth.forbidden":       {"你的角色无权访问此页面。", "Your role may not use this page."},
	"metrics.denied":       {"/metrics 只对 CARDHOUR_METRICS_ALLOW 所列网络（默认仅本机）、带 CARDHOUR_METRICS_TOKEN 的请求和管理员开放。", "/metrics answers the networks in CARDHOUR_METRICS_ALLOW (by default this host only), requests with CARDHOUR_METRICS_TOKEN, and admins."},
	"auth.rate_limited":    {"登录尝试过多，请 %d 秒后再试。", "Too many login attempts; try again in %d seconds."},
	"auth.csrf":            {"表单已过期或来源不明，请刷新页面后重试。", "The form expired or came from elsewhere; reload the page and try again."},

	// A wall's board token and a host's agent token are no API tokens.
	"auth.board_token_invalid": {"看板令牌无效或已吊销，请向管理员索取新的看板地址。", "The board token is invalid or revoked; ask an admin for a new board address."},
	"auth.agent_token_invalid": {"采集令牌无效或已吊销。", "The agent token is invalid or revoked."},

	"error.duplicate":         {"记录已存在。", "This record exists already."},
	"error.in_use":            {"仍被其他记录引用，不能删除。", "Other records still refer to this; it cannot be deleted."},
	"error.missing_reference": {"引用的记录不存在。", "A referenced record does not exist."},
	"error.busy":              {"数据库繁忙，请重试。", "The database is busy; please try again."},
	"error.db_unavailable":    {"数据库暂时无法访问，恢复后页面会自动可用，无需重启。", "The database cannot be reached right now; the portal recovers by itself when it returns."},
	"error.timeout":           {"数据库在 %d 秒内没有应答，请求已停止。请稍后重试。", "The database did not answer within %d s, so the request was stopped. Please try again shortly."},
	"error.timeout_write":     {"数据库在 %d 秒内没有应答，请求已停止。刚才的提交要么已完整保存，要么完全没有保存：请先查看是否已保存，再决定是否重试。", "The database did not answer within %d s, so the request was stopped. What you submitted was either saved whole or not at all: check whether it was saved before trying again."},
	"error.internal":          {"服务器内部错误，已记录，请稍后重试。", "Something went wrong on our side; it has been logged. Please try again later."},
	"error.not_found":         {"页面或记录不存在。", "The page or record does not exist."},
	"error.bad_request":       {"请求格式不正确。", "The request is malformed."},
	"error.bad_json":          {"请求体不是有效的 JSON：%s", "The request body is not valid JSON: %s"},
	"error.method":            {"不支持此请求方法。", "This method is not allowed here."},
	"error.too_large":         {"请求内容过大。", "The request is too large."},
	"error.home":              {"返回首页", "Back to the start page"},
	"error.retry":             {"重试", "Try again"},
	"error.id":                {"编号无效。", "Invalid id."},
	"audit.limit_range":       {"limit 须为 1 到 1000 的整数。", "limit must be a whole number from 1 to 1000."},
	"audit.offset_range":      {"offset 须为非负整数。", "offset must be a whole number, 0 or more."},

	"status.400": {"请求有误", "Bad request"},
	"status.401": {"需要登录", "Login required"},
	"status.403": {"无权访问", "Forbidden"},
	"status.404": {"未找到", "Not found"},
	"status.405": {"方法不允许", "Method not allowed"},
	"status.409": {"冲突", "Conflict"},
	"status.413": {"内容过大", "Too large"},
	"status.422": {"输入无效", "Invalid input"},
	"status.429": {"请求过多", "Too many requests"},
	"status.500": {"服务器错误", "Server error"},
	"status.503": {"暂不可用", "Unavailable"},

	"booking.already_over":          {"该预约已结束。", "This booking is already over."},
	"booking.approve_managers":      {"只有团队经理或管理员可以审批。", "Only the team's managers and admins may approve."},
	"booking.cancel_running":        {"预约已开始，不能取消；请用“提前释放”归还剩余卡时。", "The booking has started and cannot be cancelled; release it early to return the remaining card-hours."},
	"booking.count_range":           {"卡数须为 1 到 %d 之间的整数（单次预约上限）。", "The card count must be a whole number from 1 to %d (the most one booking may take)."},
	"booking.end_before_start":      {"结束时间须晚于开始时间。", "The end must be after the start."},
	"booking.end_required":          {"请填写结束时间。", "Enter the end time."},
	"booking.extend_conflict":       {"这些卡在 %s 已被其他预约占用，无法延长。", "These cards are booked by someone else from %s; the booking cannot be extended."},
	"booking.extend_not_later":      {"新的结束时间须晚于当前结束时间。", "The new end must be later than the current end."},
	"booking.no_capacity":           {"没有足够的空闲卡：需要 %d 张，该时段只有 %d 张空闲。可换时段、换卡型，或勾选“排队等候”。", "Not enough free cards: %d wanted, %d free in that window. Try another window or card type, or choose to wait in the queue."},
	"booking.no_capacity_reserved":  {"需要 %d 张，非核心任务该时段最多可用 %d 张（其余为核心任务预留）。", "%d cards wanted; non-core tasks may use at most %d in that window (the rest is reserved for core tasks)."},
	"booking.not_awaiting_approval": {"该预约不在待审批状态。", "This booking is not waiting for approval."},
	"booking.not_cancellable":       {"状态为 %s 的预约不能取消。", "A booking in state %s cannot be cancelled."},
	"booking.not_extendable":        {"状态为 %s 的预约不能延长。", "A booking in state %s cannot be extended."},
	"booking.not_found":             {"预约不存在。", "Booking not found."},
	"booking.not_releasable":        {"状态为 %s 的预约不能释放。", "A booking in state %s cannot be released."},
	"booking.not_your_team":         {"只能为自己所在团队（成员或经理）的任务预约。", "You can only book for tasks of teams you belong to as a member or manager."},
	"booking.not_yours":             {"只有预约人、团队经理或管理员可以修改此预约。", "Only the booking's owner, a team manager or an admin may change it."},
	"booking.past_horizon":          {"超出可预约范围（默认最远 90 天）。", "Beyond the booking horizon (90 days ahead by default)."},
	"booking.start_past":            {"开始时间已过去。", "The start is in the past."},
	"booking.start_required":        {"请填写开始时间。", "Enter the start time."},
	"booking.too_short":             {"预约时长太短（至少 5 分钟）。", "The booking is too short (at least 5 minutes)."},

	"notify.data_wait": {"预约 #%v 已到开始时间，但任务数据未就绪，卡已让给下一个就绪的请求；数据就绪后会自动重新排入。", "Booking #%v reached its start but the task's data is not ready; its cards went to the next ready request. It is placed again once the data is ready."},
	"notify.placed":    {"排队中的预约 #%v 已分配到卡。", "Your queued booking #%v now has cards."},
	"notify.no_show":   {"预约 #%v 开始后 %v 分钟内卡上没有任何任务运行（未使用），卡已释放回资源池，未用的卡时退回配额（闲时不占）。", "Booking #%v: nothing ran on its cards in the first %v minutes (no-show); the cards went back to the pool and the unused card-hours to the quota."},
	"notify.preempted": {"预约 #%v 被核心任务“%v”抢占（次要任务让位于核心任务）。", "Booking #%v was preempted by the core task “%v” (backfill gives way to core work)."},

	"quota.expiry_before_start": {"到期时间须晚于生效时间。", "The expiry must be after the start of validity."},
	"quota.hours_range":         {"额度卡时须大于 %s，最多 %s 卡时。", "The card-hours must be above %s and at most %s card-hours."},
	"quota.identity_fixed":      {"额度的团队和卡型不能修改，请新建额度。", "A quota's team and card type cannot change; create a new quota."},
	"quota.max_cards_range":     {"并发卡数上限须为 %s（不限）到 %s。", "The concurrent-card cap must be %s (none) to %s."},
	"quota.none":                {"你的团队没有该卡型的有效额度，请联系经理或管理员申请。", "Your team has no valid quota for this card type; ask a manager or admin for one."},
	"quota.not_yet_valid":       {"额度尚未生效：开始时间比额度生效早 %s 小时。", "The quota is not valid yet: the booking starts %s hours before it."},
	"quota.not_your_team":       {"只能管理自己任经理的团队的额度。", "You may only manage quotas of teams you manage."},
	"quota.over_cards":          {"超出额度的并发卡数上限 %d 张。", "Over the quota's cap on concurrent cards by %d."},
	"quota.over_hours":          {"超出额度 %s 卡时。", "Over the quota by %s card-hours."},
	"quota.overlap":             {"同一团队同一卡型的额度时段不能重叠。", "Quotas of one team and card type may not overlap in time."},
	"quota.past_expiry":         {"预约超出额度到期时间 %s 小时，长任务可能中途断——请先续额度。", "The booking runs %s hours past the quota's expiry; renew the quota first so a long run is not cut off."},

	"task.estimate_range":    {"卡时预估须大于 %s，最多 %s 卡时。", "The card-hour estimate must be above %s and at most %s card-hours."},
	"task.name_taken":        {"团队中已有同名任务。", "The team has a task with this name."},
	"task.not_found":         {"任务不存在。", "Task not found."},
	"task.precision_invalid": {"精度须为 fp32、tf32、bf16、fp16、fp8 或 int8。", "The precision must be fp32, tf32, bf16, fp16, fp8 or int8."},
	"task.priority_invalid":  {"优先级须为核心、常规或补位。", "The priority must be core, normal or backfill."},
	"task.readiness_invalid": {"数据就绪度须为未就绪、部分就绪或已就绪。", "Data readiness must be not ready, partial or ready."},
	"task.team_fixed":        {"任务所属团队不能修改。", "A task's team cannot change."},
	"task.team_required":     {"请选择团队。", "Choose a team."},
	"task.vram_range":        {"显存需求须在 %s 到 %s GiB 之间。", "The VRAM need must be between %s and %s GiB."},

	"template.duration_range": {"模板时长须在 5 分钟到可预约范围之间。", "The template's length must be between 5 minutes and the booking horizon."},
	"template.name_taken":     {"团队中已有同名模板。", "The team has a template with this name."},
	"template.not_found":      {"模板不存在。", "Template not found."},
	"feed.not_found":          {"日历订阅地址无效或已更换。", "This calendar feed URL is invalid or was replaced."},
}
