package postgresadapter

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// SCRAM parameters of the verifiers the adapter stores: PostgreSQL's own
// defaults.
const (
	scramIterations = 4096
	scramSaltLen    = 16
)

// scramVerifier returns the SCRAM-SHA-256 verifier PostgreSQL stores for a
// password (RFC 5802, RFC 7677):
//
//	SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>
//
// Handing the server a verifier rather than the password keeps the
// password out of its statement log. The password must be ASCII without
// control characters (the derived ones are hex), which SASLprep leaves
// unchanged.
func scramVerifier(password string, salt []byte, iterations int) (string, error) {
	for i := 0; i < len(password); i++ {
		if c := password[i]; c < 0x21 || c > 0x7e {
			return "", fmt.Errorf("scram verifier: password byte %d is not printable ASCII", i)
		}
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return "", fmt.Errorf("scram verifier: %w", err)
	}
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	serverKey := hmacSHA256(salted, "Server Key")
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(storedKey[:]), b64(serverKey)), nil
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}
