package web

// listsMessages are the messages of the lists' search, filters and pager,
// and of the copy button.
var listsMessages = map[string][2]string{
	"pager.showing":  {"第 %d–%d 项，共 %d 项", "%d–%d of %d"},
	"pager.page_of":  {"第 %d / %d 页", "Page %d of %d"},
	"pager.per_page": {"每页", "Per page"},

	"list.search":          {"搜索", "Search"},
	"list.apply":           {"筛选", "Filter"},
	"list.clear":           {"清除筛选", "Clear"},
	"list.search_bookings": {"任务、团队、用户、卡 UUID、主机或 #编号", "Task, team, user, card UUID, host or #number"},
	"list.search_tasks":    {"任务、团队或创建人", "Task, team or author"},
	"list.search_cards":    {"UUID、主机、可用区或型号", "UUID, host, zone or model"},

	"bklist.state":      {"状态", "State"},
	"bklist.live":       {"进行中与待开始", "Live and upcoming"},
	"bklist.all_states": {"全部状态", "All states"},
	"bklist.team":       {"团队", "Team"},
	"bklist.all_teams":  {"全部团队", "All teams"},
	"bklist.card_type":  {"卡型", "Card type"},
	"bklist.all_types":  {"全部卡型", "All card types"},
	"bklist.from":       {"从（日期）", "From (date)"},
	"bklist.to":         {"到（日期，含当天）", "To (date, inclusive)"},
	"bklist.mine":       {"只看我的", "Only mine"},
	"bklist.none":       {"没有符合条件的预约。", "No bookings match."},

	"tasklist.all_priorities": {"全部优先级", "All priorities"},
	"tasklist.any_readiness":  {"全部就绪状态", "Any readiness"},
	"tasklist.none":           {"没有符合条件的任务。", "No tasks match."},

	"copy.button": {"复制", "Copy"},
	"copy.done":   {"已复制", "Copied"},
	"copy.failed": {"无法复制，请手动选中复制", "Could not copy: select it and copy by hand"},
}
