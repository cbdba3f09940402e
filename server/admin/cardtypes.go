package admin

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/money"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

var cardTypeFields = []string{"name", "vram_gib", "price", "tflops_fp32", "tflops_tf32", "tflops_bf16", "tflops_fp16", "tflops_fp8", "tflops_int8"}

func (a *Area) cardTypeRows(c echo.Context) ([]web.CardTypeRow, error) {
	ctx := c.Request().Context()
	types, err := a.Store.FindCardTypes(ctx)
	if err != nil {
		return nil, err
	}
	cards, err := a.Store.FindCards(ctx, store.CardFilter{})
	if err != nil {
		return nil, err
	}
	perType := store.CardsPerType(cards)
	rows := make([]web.CardTypeRow, 0, len(types))
	for _, t := range types {
		rows = append(rows, web.CardTypeRow{ID: t.ID, Name: t.Name, VRAMGiB: t.VRAMGiB, TFLOPS: t.TFLOPSByPrecision(), PriceFen: t.PriceFen, Cards: perType[t.ID]})
	}
	return rows, nil
}

// cardTypeFromForm parses the form; number fields that do not parse are
// reported next to their inputs together with the store's own checks.
func cardTypeFromForm(f web.Form) (store.CardTypeInput, error) {
	v := errs.NewValidation("server.cardTypeFromForm")
	in := store.CardTypeInput{Name: f.Value("name")}
	if vr := strings.TrimSpace(f.Value("vram_gib")); vr == "" {
		v.Add("vram_gib", "field.required")
	} else if n, err := strconv.Atoi(vr); err != nil {
		v.Add("vram_gib", "field.integer")
	} else {
		in.VRAMGiB = n
	}
	if pr := strings.TrimSpace(f.Value("price")); pr == "" {
		v.Add("price", "field.required")
	} else if fen, err := money.ParseYuan(pr); err != nil {
		v.Add("price", "cardtype.price_range")
	} else {
		in.PriceFen = int64(fen)
	}
	targets := map[string]*float64{
		"tflops_fp32": &in.TFLOPSFP32, "tflops_tf32": &in.TFLOPSTF32, "tflops_bf16": &in.TFLOPSBF16,
		"tflops_fp16": &in.TFLOPSFP16, "tflops_fp8": &in.TFLOPSFP8, "tflops_int8": &in.TFLOPSINT8,
	}
	for field, dst := range targets {
		raw := strings.TrimSpace(f.Value(field))
		if raw == "" {
			continue
		}
		x, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			v.Add(field, "field.number")
			continue
		}
		*dst = x
	}
	if err := v.Err(); err != nil {
		return in, err
	}
	return in, nil
}

func cardTypeForm(t *store.CardType) web.Form {
	f := web.NewForm()
	f.Values["name"] = t.Name
	f.Values["vram_gib"] = strconv.Itoa(t.VRAMGiB)
	f.Values["price"] = money.Fen(t.PriceFen).Plain()
	for _, p := range store.Precisions {
		if v := t.TFLOPS(p); v != 0 {
			f.Values["tflops_"+p] = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return f
}

func (a *Area) cardTypesPage(c echo.Context) error {
	return a.renderCardTypes(c, http.StatusOK, web.NewForm(), "")
}

func (a *Area) renderCardTypes(c echo.Context, status int, f web.Form, listErr string) error {
	rows, err := a.cardTypeRows(c)
	if err != nil {
		return err
	}
	return response.Render(c, status, web.CardTypesPage(a.Pages.Page(c, "admin.cardtypes", "admin"), rows, f, listErr))
}

func (a *Area) createCardTypeForm(c echo.Context) error {
	f := request.Form(c, cardTypeFields...)
	in, err := cardTypeFromForm(f)
	if err == nil {
		var t *store.CardType
		if t, err = a.Store.CreateCardType(c.Request().Context(), in); err == nil {
			return a.Pages.RedirectWithFlash(c, "/admin/card-types", web.T(request.Lang(c), "admin.created", t.Name))
		}
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderCardTypes(c, response.StatusOf(err), f, "")
}

func (a *Area) editCardTypePage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	t, err := a.Store.FindCardTypeByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return response.Render(c, http.StatusOK, web.CardTypeEditPage(a.Pages.Page(c, "admin.cardtypes", "admin"), id, cardTypeForm(t)))
}

func (a *Area) updateCardTypeForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	f := request.Form(c, cardTypeFields...)
	in, err := cardTypeFromForm(f)
	if err == nil {
		var t *store.CardType
		if t, err = a.Store.UpdateCardType(c.Request().Context(), id, in); err == nil {
			return a.Pages.RedirectWithFlash(c, "/admin/card-types", web.T(request.Lang(c), "admin.updated", t.Name))
		}
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return response.Render(c, response.StatusOf(err), web.CardTypeEditPage(a.Pages.Page(c, "admin.cardtypes", "admin"), id, f))
}

func (a *Area) deleteCardTypeForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	t, err := a.Store.FindCardTypeByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if err := a.Store.DeleteCardType(c.Request().Context(), id); err != nil {
		if msg, ok := response.Refusal(request.Lang(c), err); ok {
			return a.renderCardTypes(c, response.StatusOf(err), web.NewForm(), msg)
		}
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/card-types", web.T(request.Lang(c), "admin.deleted", t.Name))
}

// cardTypeJSON is a card type in the API, with the price also in yuan for
// people reading the JSON.
type cardTypeJSON struct {
	store.CardType
	PriceYuan string `json:"price_yuan"`
}

func toCardTypeJSON(t store.CardType) cardTypeJSON {
	return cardTypeJSON{CardType: t, PriceYuan: money.Fen(t.PriceFen).Plain()}
}

// cardTypeRequest accepts the price as price_fen or as price_yuan text.
type cardTypeRequest struct {
	store.CardTypeInput
	PriceYuan *string `json:"price_yuan"`
}

func (r cardTypeRequest) input() (store.CardTypeInput, error) {
	in := r.CardTypeInput
	if r.PriceYuan != nil {
		fen, err := money.ParseYuan(*r.PriceYuan)
		if err != nil {
			return in, &errs.Error{Code: errs.Invalid, Op: "server.cardTypeRequest", Key: "cardtype.price_range", Fields: map[string]string{"price_yuan": "cardtype.price_range"}}
		}
		in.PriceFen = int64(fen)
	}
	return in, nil
}

func (a *Area) apiListCardTypes(c echo.Context) error {
	types, err := a.Store.FindCardTypes(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]cardTypeJSON, 0, len(types))
	for _, t := range types {
		out = append(out, toCardTypeJSON(t))
	}
	return c.JSON(http.StatusOK, map[string]any{"card_types": out})
}

func (a *Area) apiGetCardType(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	t, err := a.Store.FindCardTypeByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toCardTypeJSON(*t))
}

func (a *Area) apiCreateCardType(c echo.Context) error {
	var req cardTypeRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	in, err := req.input()
	if err != nil {
		return err
	}
	t, err := a.Store.CreateCardType(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toCardTypeJSON(*t))
}

func (a *Area) apiUpdateCardType(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	var req cardTypeRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	in, err := req.input()
	if err != nil {
		return err
	}
	t, err := a.Store.UpdateCardType(c.Request().Context(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toCardTypeJSON(*t))
}

func (a *Area) apiDeleteCardType(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteCardType(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
