package main

import (
	"fmt"
	"strconv"
	"strings"
)

// parseRetentionAccounts reads --containerDeleteRetentionAccounts:
// comma-separated account=days pairs, each account's own container delete
// retention (0 turns it off for that account; Azure keeps the setting per
// account, in its management plane).
func parseRetentionAccounts(v string) (map[string]int, error) {
	out := map[string]int{}
	for _, item := range splitList(v) {
		acct, d, ok := strings.Cut(item, "=")
		acct = strings.TrimSpace(acct)
		days, err := strconv.Atoi(strings.TrimSpace(d))
		if !ok || acct == "" || err != nil || days < 0 || days > 365 {
			return nil, fmt.Errorf("--containerDeleteRetentionAccounts: %q is not account=days (days 0-365)", item)
		}
		out[acct] = days
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
