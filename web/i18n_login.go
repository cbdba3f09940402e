package web

// loginMessages are sign-in's through the company directory (LDAP) and
// single sign-on (OpenID Connect).
var loginMessages = map[string][2]string{
	"login.sso":                  {"使用 %s 登录", "Sign in with %s"},
	"login.or":                   {"或使用用户名和密码", "or with a username and password"},
	"login.local_admin":          {"管理员密码登录", "Administrator sign-in with a password"},
	"login.directory_hint":       {"公司目录（LDAP）账号可直接用其密码登录。", "Company directory (LDAP) accounts sign in with their directory password."},
	"auth.local_off":             {"本地账户密码登录已被管理员关闭，请使用公司账号登录。", "Password sign-in for local accounts is turned off by an admin; sign in with your company account."},
	"auth.sso_failed":            {"公司账号登录未通过校验，请重试。", "The company sign-in could not be verified; try again."},
	"auth.sso_denied":            {"身份提供方拒绝了登录（%s）。", "The identity provider refused the sign-in (%s)."},
	"auth.sso_off":               {"未配置公司账号登录。", "Company sign-in is not configured."},
	"directory.unreachable":      {"暂时无法连接公司目录或身份提供方，请稍后再试；本地账户不受影响。", "The company directory or identity provider cannot be reached right now; try again shortly. Local accounts are not affected."},
	"directory.sync_done":        {"目录同步完成：检查 %d 个账户，更新 %d 个，停用 %d 个。", "Directory sync done: %d accounts checked, %d updated, %d disabled."},
	"directory.sync_unreachable": {"目录同步未完成：无法连接公司目录，未停用任何账户。", "Directory sync did not finish: the company directory cannot be reached; no account was disabled."},
	"directory.ldap_off":         {"未配置 LDAP 目录。", "No LDAP directory is configured."},
	"directory.sync_now":         {"立即同步", "Sync now"},
	"account.password_directory": {"此账户通过 %s 登录，密码在公司目录中修改。", "This account signs in through %s: its password is changed in the company directory."},
}
