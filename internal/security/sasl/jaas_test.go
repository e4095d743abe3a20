package sasl

import (
	"maps"
	"testing"
)

func TestParseJAASKafkaExamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want JAASEntry
	}{
		{
			// Kafka's documentation, SASL/PLAIN broker configuration
			// (the .properties line continuations already joined).
			name: "PLAIN broker",
			in: `org.apache.kafka.common.security.plain.PlainLoginModule required ` +
				`username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`,
			want: JAASEntry{PlainLoginModule, "required", map[string]string{
				"username": "admin", "password": "admin-secret",
				"user_admin": "admin-secret", "user_alice": "alice-secret",
			}},
		},
		{
			name: "SCRAM client",
			in:   `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";`,
			want: JAASEntry{ScramLoginModule, "required", map[string]string{"username": "alice", "password": "alice-secret"}},
		},
		{
			name: "SCRAM delegation token",
			in:   `org.apache.kafka.common.security.scram.ScramLoginModule required username="tokenID123" password="lAYYSFmLs4bTjf+lTZ1LCHR/ZZFNA==" tokenauth="true";`,
			want: JAASEntry{ScramLoginModule, "required", map[string]string{
				"username": "tokenID123", "password": "lAYYSFmLs4bTjf+lTZ1LCHR/ZZFNA==", "tokenauth": "true",
			}},
		},
		{
			name: "OAUTHBEARER unsecured, multi-line",
			in: "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule Required\n" +
				"    unsecuredLoginStringClaim_sub=\"thePrincipalName\"\n" +
				"    unsecuredLoginListClaim_scope=\",KAFKA_BROKER,LOGIN_TO_KAFKA\"\n" +
				"    unsecuredValidatorRequiredScope=\"LOGIN_TO_KAFKA\"\n" +
				"    unsecuredValidatorAllowableClockSkewMs=\"3000\";",
			want: JAASEntry{OAuthBearerLoginModule, "required", map[string]string{
				"unsecuredLoginStringClaim_sub":          "thePrincipalName",
				"unsecuredLoginListClaim_scope":          ",KAFKA_BROKER,LOGIN_TO_KAFKA",
				"unsecuredValidatorRequiredScope":        "LOGIN_TO_KAFKA",
				"unsecuredValidatorAllowableClockSkewMs": "3000",
			}},
		},
		{
			name: "no options",
			in:   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;",
			want: JAASEntry{OAuthBearerLoginModule, "required", map[string]string{}},
		},
		{
			name: "flags any case",
			in:   "test.Module SuFfIcIeNt propName=propValue;",
			want: JAASEntry{"test.Module", "sufficient", map[string]string{"propName": "propValue"}},
		},
		{
			name: "requisite and optional",
			in:   "test.Module requisite a=b c=d;",
			want: JAASEntry{"test.Module", "requisite", map[string]string{"a": "b", "c": "d"}},
		},
		{
			name: "quoted values with spaces and separators",
			in:   `test.Module optional propName="prop value" propName2="value1 = 1, value2 = 2";`,
			want: JAASEntry{"test.Module", "optional", map[string]string{"propName": "prop value", "propName2": "value1 = 1, value2 = 2"}},
		},
		{
			name: "quoted option name",
			in:   `test.Module required "prop name"=propValue;`,
			want: JAASEntry{"test.Module", "required", map[string]string{"prop name": "propValue"}},
		},
		{
			name: "quoted number",
			in:   `test.Module required option1="3";`,
			want: JAASEntry{"test.Module", "required", map[string]string{"option1": "3"}},
		},
		{
			name: "single quotes, escapes",
			in:   `test.Module required a='its' b="say \"hi\"\\" c="tab\there" d="\101\0612" e='x"y';`,
			want: JAASEntry{"test.Module", "required", map[string]string{
				"a": "its", "b": `say "hi"\`, "c": "tab\there", "d": "A12", "e": `x"y`,
			}},
		},
		{
			name: "word characters",
			in:   `com.example.My-Module_1$ required user_bob-2=pa$$.word_1 x.y="-z";`,
			want: JAASEntry{"com.example.My-Module_1$", "required", map[string]string{"user_bob-2": "pa$$.word_1", "x.y": "-z"}},
		},
		{
			name: "comments",
			in: "// a comment line\n/* block\n comment */ test.Module /* inline */ required\n" +
				"  a=\"b\" // trailing\n  c=\"d\";",
			want: JAASEntry{"test.Module", "required", map[string]string{"a": "b", "c": "d"}},
		},
		{
			name: "later duplicate wins",
			in:   `test.Module required a="1" a="2";`,
			want: JAASEntry{"test.Module", "required", map[string]string{"a": "2"}},
		},
		{
			name: "non-ASCII",
			in:   `test.Module required user_zoë="pässwörd" ключ=значение;`,
			want: JAASEntry{"test.Module", "required", map[string]string{"user_zoë": "pässwörd", "ключ": "значение"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseJAAS(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.LoginModule != tc.want.LoginModule || got.Flag != tc.want.Flag || !maps.Equal(got.Options, tc.want.Options) {
				t.Fatalf("ParseJAAS = %+v\nwant         %+v", got, tc.want)
			}
		})
	}
}

func TestParseJAASMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "Login module not specified in JAAS config"},
		{"only comments", "/* nothing */ // here", "Login module not specified in JAAS config"},
		{"missing login module", "  required option1=value1;", "Invalid login module control flag 'option1' in JAAS config"},
		{"missing control flag", "test.loginModule option1=value1;", "Invalid login module control flag 'option1' in JAAS config"},
		{"flag then EOF", "test.loginModule", "Login module control flag not specified in JAAS config"},
		{"flag not a word", "test.loginModule ;", "Login module control flag is not available in the JAAS config"},
		{"invalid control flag", "test.testInvalidControlFlag { option1=3;", "Login module control flag is not available in the JAAS config"},
		{"unknown control flag", "test.Module mandatory;", "Invalid login module control flag 'mandatory' in JAAS config"},
		{"missing option value", "loginModule required option1;", "Value not specified for key 'option1' in JAAS config"},
		{"missing value after =", "loginModule required option1=;", "Value not specified for key 'option1' in JAAS config"},
		{"value at EOF", "loginModule required option1=", "Value not specified for key 'option1' in JAAS config"},
		{"numeric option without quotes", "test.testNumericOptionWithoutQuotes required option1=3;", "Value not specified for key 'option1' in JAAS config"},
		{"missing semicolon", "test.testMissingSemicolon required option1=value1", "JAAS config entry not terminated by semi-colon"},
		{"unterminated comment", "test.Module required a=b /* ;", "JAAS config entry not terminated by semi-colon"},
		{"properties continuation left in", "test.Module required \\\n a=b;", "Value not specified for key 'null' in JAAS config"},
		{"key not a word", "test.Module required 3=\"x\";", "Option name not specified for value 'x' in JAAS config"},
		{"unquoted value starting with -", "test.Module required x.y=-z;", "Value not specified for key 'x.y' in JAAS config"},
		{"quote opened twice", "test.Module required a='it''s' b=c;", "Value not specified for key 's' in JAAS config"},
		{"module not a word", "; required;", "Login module name not specified in JAAS config"},
		{"two modules", "a.B required; c.D optional x=y;", "JAAS config property contains 2 login modules, should be 1 module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseJAAS(tc.in)
			if err == nil {
				t.Fatalf("ParseJAAS(%q) = %+v, want error %q", tc.in, got, tc.want)
			}
			if err.Error() != tc.want {
				t.Fatalf("ParseJAAS(%q) error %q, want %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestPlainUsersFromJAAS(t *testing.T) {
	e, err := ParseJAAS(`org.apache.kafka.common.security.plain.PlainLoginModule required ` +
		`username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_="nobody";`)
	if err != nil {
		t.Fatal(err)
	}
	users := PlainUsersFromJAAS(e)
	want := PlainUsers{"admin": "admin-secret", "alice": "alice-secret"}
	if !maps.Equal(users, want) {
		t.Fatalf("PlainUsersFromJAAS = %v, want %v", users, want)
	}
	// As in Kafka, only the PLAIN login module supplies users.
	e.LoginModule = ScramLoginModule
	if users := PlainUsersFromJAAS(e); len(users) != 0 {
		t.Fatalf("users from a SCRAM entry: %v", users)
	}
}

func TestUnsecuredOAuthConfigFromJAAS(t *testing.T) {
	e, err := ParseJAAS(`org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ` +
		`unsecuredValidatorPrincipalClaimName=" principal " unsecuredValidatorScopeClaimName="scp" ` +
		`unsecuredValidatorRequiredScope="LOGIN  READ" unsecuredValidatorAllowableClockSkewMs="3000";`)
	if err != nil {
		t.Fatal(err)
	}
	c, err := UnsecuredOAuthConfigFromJAAS(e)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Unsecured || c.SubClaimName != "principal" || c.ScopeClaimName != "scp" ||
		len(c.RequiredScope) != 2 || c.RequiredScope[0] != "LOGIN" || c.RequiredScope[1] != "READ" ||
		c.ClockSkew.Milliseconds() != 3000 {
		t.Fatalf("config %+v", c)
	}
	for _, bad := range []string{
		`unsecuredValidatorAllowableClockSkewMs="-1"`,
		`unsecuredValidatorAllowableClockSkewMs="1.5"`,
		`unsecuredValidatorAllowableClockSkewMs="99999999999"`,
		`unsecuredValidatorRequiredScope="a\"b"`,
	} {
		e, err := ParseJAAS("x.Y required " + bad + ";")
		if err != nil {
			t.Fatal(err)
		}
		if c, err := UnsecuredOAuthConfigFromJAAS(e); err == nil {
			t.Errorf("%s accepted: %+v", bad, c)
		}
	}
}

// TestParseJAASFile reads a JAAS file as Kafka's docs and Docker images
// write one for brokers: a KafkaServer section with one entry per
// mechanism, a listener-prefixed section, a client section and comments.
func TestParseJAASFile(t *testing.T) {
	file := `
// brokers
KafkaServer {
    org.apache.kafka.common.security.plain.PlainLoginModule required
    username="admin"
    password="admin-secret"
    user_admin="admin-secret"
    user_alice="alice-secret";
    org.apache.kafka.common.security.scram.ScramLoginModule required;
};
sasl_ssl.KafkaServer {
    org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret";
};
/* clients */
KafkaClient { org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret"; };
`
	got, err := ParseJAASFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if s := got["KafkaServer"]; len(s) != 2 || s[0].LoginModule != PlainLoginModule || s[0].Options["user_alice"] != "alice-secret" ||
		s[1].LoginModule != ScramLoginModule {
		t.Errorf("KafkaServer: %+v", s)
	}
	if s := got["sasl_ssl.KafkaServer"]; len(s) != 1 || PlainUsersFromJAAS(s[0])["bob"] != "bob-secret" {
		t.Errorf("sasl_ssl.KafkaServer: %+v", s)
	}
	if len(got["KafkaClient"]) != 1 || len(got) != 3 {
		t.Errorf("sections: %+v", got)
	}
	for _, bad := range []string{"KafkaServer { x required; }", "KafkaServer x required; };", "KafkaServer { x required;"} {
		if _, err := ParseJAASFile(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if p := JAASFileFromOpts(`-Xmx1G -Djava.security.auth.login.config=/etc/kafka/jaas.conf -Dx=y`); p != "/etc/kafka/jaas.conf" {
		t.Errorf("JAASFileFromOpts: %q", p)
	}
}
