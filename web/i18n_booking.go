package web

// bookingMessages are the messages of tasks, the estimator, booking pages.
var bookingMessages = map[string][2]string{}
