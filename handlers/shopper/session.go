package shopper

import (
	"crypto/hkdf"
	"crypto/sha256"
	"net/http"

	"github.com/gorilla/sessions"
)

// NewSessionStore keeps the conveniences cookie: the language chosen and the
// last bank used, nothing a checkout needs. Each
// secret gives a pair of signing and encryption keys; the first pair writes,
// all read. secure marks the cookie Secure (the app is served over https).
func NewSessionStore(secrets [][]byte, secure bool) (sessions.Store, error) {
	var pairs [][]byte
	for _, s := range secrets {
		auth, err := hkdf.Key(sha256.New, s, nil, "paybybank cookie auth", 32)
		if err != nil {
			return nil, err
		}
		enc, err := hkdf.Key(sha256.New, s, nil, "paybybank cookie encryption", 32)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, auth, enc)
	}
	store := sessions.NewCookieStore(pairs...)
	store.Options = &sessions.Options{
		Path:     "/",
		MaxAge:   90 * 24 * 3600,
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	}
	return store, nil
}
