package web

// filesMessages are the task files' texts.
var filesMessages = map[string][2]string{}
