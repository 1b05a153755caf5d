package views

import (
	"context"
	"strconv"
	"strings"

	"github.com/paybybank/checkout/i18n"
)

// describedBy ties an input to its hint and error for screen readers.
func describedBy(f Field) string {
	var ids []string
	if f.Hint != "" {
		ids = append(ids, f.ID+"-hint")
	}
	if f.Error != "" {
		ids = append(ids, f.ID+"-error")
	}
	return strings.Join(ids, " ")
}

func optionID(f Field, i int) string {
	if i == 0 {
		return f.ID
	}
	return f.ID + "-" + strconv.Itoa(i)
}

// emptyOption is the label of a select's empty choice.
func emptyOption(ctx context.Context, f Field) string {
	if f.EmptyOption != "" {
		return f.EmptyOption
	}
	return i18n.T(ctx, "pay.choose")
}
