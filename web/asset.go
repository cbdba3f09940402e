package web

import "cardhour/assets"

// asset is the content-hashed URL of an embedded file ("css/app.css"), so a
// page always loads the stylesheets and scripts of the release that drew it.
func asset(name string) string { return assets.URL(name) }
