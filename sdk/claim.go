package sdk

import (
	"strings"
)

// claimPrefix starts every claim text an adapter records on a server.
const claimPrefix = "binky-owner:"

// maxClaim bounds a claim's text: it must fit a MariaDB schema comment
// (1024), an S3 tag value (256) and the like.
const maxClaim = 200

// Claim is the text an adapter records on its server to say which binky
// home owns a slice: "binky-owner:<owner> <label>". It holds only
// characters every backend takes in a comment, a tag or a key (letters,
// digits, space and ._:/@+=-), and is at most 200 bytes. Empty when t
// carries no owner.
func (t Target) Claim() string {
	if t.Owner == "" {
		return ""
	}
	s := claimPrefix + cleanClaim(t.Owner)
	if t.OwnerLabel != "" {
		s += " " + cleanClaim(t.OwnerLabel)
	}
	if len(s) > maxClaim {
		s = s[:maxClaim]
	}
	return s
}

// ClaimOwner reads the owner out of a recorded claim text; ok is false when
// text is not a claim (empty, or something else stored in the same place,
// such as a comment a person wrote).
func ClaimOwner(text string) (owner string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(text), claimPrefix)
	if !found {
		return "", false
	}
	owner, _, _ = strings.Cut(rest, " ")
	return owner, owner != ""
}

// CheckClaim decides whether t may act on a slice whose server records
// claim (the text Claim wrote, or "" when none): nil when t has no owner
// (an older host), when the slice is unclaimed (the caller adopts it by
// recording its own claim), or when the claim is t's own; otherwise a
// CodeConflict error naming the owning home.
func (t Target) CheckClaim(what, claim string) error {
	if t.Owner == "" {
		return nil
	}
	owner, ok := ClaimOwner(claim)
	if !ok || owner == cleanClaim(t.Owner) {
		return nil
	}
	label := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(claim), claimPrefix+owner))
	if label != "" {
		label = " (" + label + ")"
	}
	return Errorf(CodeConflict, "%s belongs to another binky home, %s%s, not to this one (%s): binky never provisions into or destroys another home's slice; give this project another [project] name or remove the world from the home that owns it",
		what, owner, label, cleanClaim(t.Owner))
}

func cleanClaim(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case strings.ContainsRune(" ._:/@+=-", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
