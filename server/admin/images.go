package admin

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

var imageFields = []string{"name", "reference", "cuda_version", "frameworks", "description"}

func imageFromForm(f web.Form) store.ImageInput {
	return store.ImageInput{Name: f.Value("name"), Reference: f.Value("reference"), CUDAVersion: f.Value("cuda_version"),
		Frameworks: f.Value("frameworks"), Description: f.Value("description")}
}

func imageForm(i *store.Image) web.Form {
	f := web.NewForm()
	f.Values["name"] = i.Name
	f.Values["reference"] = i.Reference
	f.Values["cuda_version"] = i.CUDAVersion
	f.Values["frameworks"] = i.Frameworks
	f.Values["description"] = i.Description
	return f
}

func (a *Area) imagesPage(c echo.Context) error {
	return a.renderImages(c, http.StatusOK, web.NewForm(), "")
}

func (a *Area) renderImages(c echo.Context, status int, f web.Form, listErr string) error {
	images, err := a.Store.FindImages(c.Request().Context())
	if err != nil {
		return err
	}
	rows := make([]web.ImageRow, 0, len(images))
	for _, i := range images {
		rows = append(rows, web.ImageRow{ID: i.ID, Name: i.Name, Reference: i.Reference, CUDAVersion: i.CUDAVersion,
			Frameworks: i.Frameworks, Description: i.Description})
	}
	return response.Render(c, status, web.ImagesPage(a.Pages.Page(c, "admin.images", "admin"), rows, response.Limited(f, store.ImageLimits), listErr))
}

func (a *Area) createImageForm(c echo.Context) error {
	f := request.Form(c, imageFields...)
	i, err := a.Store.CreateImage(c.Request().Context(), imageFromForm(f))
	if err == nil {
		return a.Pages.RedirectWithFlash(c, "/admin/images", web.T(request.Lang(c), "admin.created", i.Name))
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderImages(c, response.StatusOf(err), f, "")
}

func (a *Area) editImagePage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	i, err := a.Store.FindImageByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return response.Render(c, http.StatusOK, web.ImageEditPage(a.Pages.Page(c, "admin.images", "admin"), id, response.Limited(imageForm(i), store.ImageLimits)))
}

func (a *Area) updateImageForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	f := request.Form(c, imageFields...)
	i, err := a.Store.UpdateImage(c.Request().Context(), id, imageFromForm(f))
	if err == nil {
		return a.Pages.RedirectWithFlash(c, "/admin/images", web.T(request.Lang(c), "admin.updated", i.Name))
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return response.Render(c, response.StatusOf(err), web.ImageEditPage(a.Pages.Page(c, "admin.images", "admin"), id, response.Limited(f, store.ImageLimits)))
}

func (a *Area) deleteImageForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	i, err := a.Store.FindImageByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if err := a.Store.DeleteImage(c.Request().Context(), id); err != nil {
		if msg, ok := response.Refusal(request.Lang(c), err); ok {
			return a.renderImages(c, response.StatusOf(err), web.NewForm(), msg)
		}
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/images", web.T(request.Lang(c), "admin.deleted", i.Name))
}

func (a *Area) apiListImages(c echo.Context) error {
	images, err := a.Store.FindImages(c.Request().Context())
	if err != nil {
		return err
	}
	if images == nil {
		images = []store.Image{}
	}
	return c.JSON(http.StatusOK, map[string]any{"images": images})
}

func (a *Area) apiGetImage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	i, err := a.Store.FindImageByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, i)
}

func (a *Area) apiCreateImage(c echo.Context) error {
	var in store.ImageInput
	if err := request.DecodeJSON(c, &in); err != nil {
		return err
	}
	i, err := a.Store.CreateImage(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, i)
}

func (a *Area) apiUpdateImage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	var in store.ImageInput
	if err := request.DecodeJSON(c, &in); err != nil {
		return err
	}
	i, err := a.Store.UpdateImage(c.Request().Context(), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, i)
}

func (a *Area) apiDeleteImage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteImage(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
