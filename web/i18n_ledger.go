package web

// ledgerMessages are the ledger's and the reports' texts.
var ledgerMessages = map[string][2]string{}
