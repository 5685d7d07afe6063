package config

import "testing"

func TestWhitelist(t *testing.T) {
	tests := []struct {
		list    string
		allowed []string
		denied  []string
		str     string
	}{
		{"", []string{"srvr"}, []string{"ruok", "mntr", "stat", "isro", ""}, "srvr"},
		{"ruok", []string{"srvr", "ruok"}, []string{"mntr"}, "ruok,srvr"},
		{"ruok,mntr", []string{"ruok", "mntr", "srvr"}, []string{"stat"}, "mntr,ruok,srvr"},
		// As ZooKeeper: split on commas only, each entry trimmed of
		// spaces and control characters.
		{"ruok, mntr", []string{"ruok", "mntr", "srvr"}, []string{"stat"}, "mntr,ruok,srvr"},
		{" stat ,\t\r\n ruok\f,, ", []string{"stat", "ruok"}, []string{"dump"}, "ruok,srvr,stat"},
		{"ruok mntr", []string{"srvr"}, []string{"ruok", "mntr"}, "ruok mntr,srvr"},
		{"stat ,  ruok\tmntr  cons", []string{"stat"}, []string{"ruok", "mntr", "cons"}, "ruok\tmntr  cons,srvr,stat"},
		{"srvr", []string{"srvr"}, []string{"ruok"}, "srvr"},
		{"*", []string{"srvr", "ruok", "wchc", "dump", "isro"}, nil, "*"},
		{"ruok, *", []string{"mntr"}, nil, "*"},
		{"RUOK", []string{"RUOK"}, []string{"ruok"}, "RUOK,srvr"},
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			w := ParseWhitelist(tt.list)
			for _, c := range tt.allowed {
				if !w.Allowed(c) {
					t.Errorf("Allowed(%q) = false", c)
				}
			}
			for _, c := range tt.denied {
				if w.Allowed(c) {
					t.Errorf("Allowed(%q) = true", c)
				}
			}
			if got := w.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
		})
	}
	var zero Whitelist
	if !zero.Allowed("srvr") || zero.Allowed("ruok") || zero.All() {
		t.Error("zero Whitelist must allow exactly srvr")
	}
}

func TestRoleString(t *testing.T) {
	for r, want := range map[Role]string{Participant: "participant", Observer: "observer", Role(7): "Role(7)"} {
		if got := r.String(); got != want {
			t.Errorf("Role(%d).String() = %q, want %q", int(r), got, want)
		}
	}
}
