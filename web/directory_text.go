package web

// ProviderName names a directory (ldap, oidc) in lang; "" is a rule's
// "any source". An unknown one shows its code rather than nothing.
func ProviderName(lang, provider string) string {
	if provider == "" {
		return T(lang, "directory.provider.any")
	}
	if key := "directory.provider." + provider; HasKey(key) {
		return T(lang, key)
	}
	return provider
}

// SourceName names where an account signs in from: "local" (a password)
// or a directory.
func SourceName(lang, source string) string {
	if source == "local" {
		return T(lang, "directory.source.local")
	}
	return ProviderName(lang, source)
}
