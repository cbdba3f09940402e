package web

import "time"

// AuditArg is one argument of a keyed audit summary, as the store keeps it:
// text shown as it is, a message key translated, or a time shown in the
// reader's zone.
type AuditArg struct {
	Text string
	Key  string
	Time *time.Time
}

// AuditSummary is an audit entry's summary in lang: the stored text of an
// entry written before summaries had keys (or of one that is a bare name),
// else its key translated with its arguments.
func AuditSummary(lang string, tz *time.Location, stored, key string, args []AuditArg) string {
	if key == "" {
		return stored
	}
	vals := make([]any, len(args))
	for i, a := range args {
		switch {
		case a.Key != "":
			vals[i] = T(lang, a.Key)
		case a.Time != nil:
			vals[i] = Page{TZ: tz}.Time(*a.Time)
		default:
			vals[i] = a.Text
		}
	}
	return T(lang, key, vals...)
}

// AuditAction names an audit action in lang; an action without a message
// yet shows its code rather than nothing.
func AuditAction(lang, action string) string {
	if key := "audit.act." + action; HasKey(key) {
		return T(lang, key)
	}
	return action
}

// AuditActor names who acted: a user by their name, the system's own
// actors (no user id: system, telemetry, demo, cli) in lang.
func AuditActor(lang, name string, isUser bool) string {
	if key := "audit.actor." + name; !isUser && HasKey(key) {
		return T(lang, key)
	}
	return name
}

// entityName names an audited record kind in lang, its code when it has no
// message yet.
func entityName(lang, entity string) string {
	if HasKey("entity." + entity) {
		return T(lang, "entity."+entity)
	}
	return entity
}
