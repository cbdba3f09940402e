package web

// apiMessages are the messages of the JSON API and OpenAPI document.
var apiMessages = map[string][2]string{
	"api.time_invalid":       {"时间格式须为 RFC 3339，例如 2026-05-01T09:00:00+08:00。", "Use an RFC 3339 time, for example 2026-05-01T09:00:00+08:00."},
	"api.time_range":         {"时间须在 2000-01-01 与 2200-01-01（UTC）之间。", "Times must lie between 2000-01-01 and 2200-01-01 (UTC)."},
	"api.ref_conflict":       {"按名称和按编号指定的不是同一条记录。", "The name and the id given point at different records."},
	"api.task_not_your_team": {"只能为自己所在团队（成员或经理）创建或修改任务。", "You can only create or change tasks of teams you belong to as a member or manager."},
	"api.bool_invalid":       {"须为 1、true、0 或 false。", "Use 1, true, 0 or false."},
	"api.state_invalid":      {"未知的预约状态；可用：pending、confirmed、active、completed、released、cancelled、preempted、no_show、rejected。", "Unknown booking state; use pending, confirmed, active, completed, released, cancelled, preempted, no_show or rejected."},
	"api.limit_range":        {"limit 须为 1 到 1000 的整数。", "limit must be a whole number from 1 to 1000."},
	"api.hours_range":        {"hours 须为 1 到 744（31 天）的整数。", "hours must be a whole number from 1 to 744 (31 days)."},
	"api.quota_not_found":    {"额度不存在，或不属于你管理的团队。", "Quota not found, or not of a team you manage."},
}
