package artifact

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	_ "image/gif" // register decoders for inspectMedia
	_ "image/jpeg"
	_ "image/png"
	"strings"
)

// inspectMedia returns facts about image and audio content for the
// descriptor's media member (Python _inspect_media). Images are measured
// with the standard library decoders (PNG, JPEG, GIF); other image formats
// get an inspection_status instead of Pillow's answer. WAV headers give
// duration, sample rate, channels and frames.
func inspectMedia(content []byte, contentType string) map[string]any {
	ct := lowerTrim(contentType)
	switch {
	case strings.HasPrefix(ct, "image/"):
		cfg, format, err := image.DecodeConfig(bytes.NewReader(content))
		if errors.Is(err, image.ErrFormat) {
			return map[string]any{
				"kind":              "image",
				"inspection_source": "go_image",
				"inspection_status": "format_unsupported",
			}
		}
		if err != nil {
			return map[string]any{
				"kind":              "image",
				"inspection_source": "go_image",
				"inspection_error":  err.Error(),
			}
		}
		return map[string]any{
			"kind":              "image",
			"width":             cfg.Width,
			"height":            cfg.Height,
			"format":            format,
			"inspection_source": "go_image",
		}
	case ct == "audio/wav" || ct == "audio/x-wav" || ct == "audio/wave" || strings.HasSuffix(ct, "/wav"):
		w, err := parseWAV(content)
		if err != nil {
			return map[string]any{
				"kind":              "audio",
				"inspection_source": "wave",
				"inspection_error":  err.Error(),
			}
		}
		duration := 0.0
		if w.rate > 0 {
			duration = float64(w.frames) / float64(w.rate)
		}
		return map[string]any{
			"kind":              "audio",
			"duration_s":        duration,
			"sample_rate":       w.rate,
			"channels":          w.channels,
			"frames":            w.frames,
			"inspection_source": "wave",
		}
	case strings.HasPrefix(ct, "audio/"):
		return map[string]any{
			"kind":              "audio",
			"inspection_source": "unsupported",
			"inspection_status": "duration_unavailable",
		}
	case strings.HasPrefix(ct, "video/"):
		return map[string]any{
			"kind":              "video",
			"inspection_source": "unsupported",
			"inspection_status": "video_inspector_not_configured",
		}
	}
	return nil
}

type wavInfo struct {
	channels, rate int
	frames         int64
}

// parseWAV reads the fmt and data chunks of a RIFF/WAVE file the way
// Python's wave module counts frames (data size / (channels × sample
// width)).
func parseWAV(b []byte) (wavInfo, error) {
	var w wavInfo
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return w, errors.New("file does not start with RIFF id")
	}
	frameSize := 0
	sawFmt := false
	for p := 12; p+8 <= len(b); {
		id := string(b[p : p+4])
		size := int64(binary.LittleEndian.Uint32(b[p+4 : p+8]))
		body := b[p+8:]
		switch id {
		case "fmt ":
			if size < 16 || len(body) < 16 {
				return w, errors.New("fmt chunk too short")
			}
			w.channels = int(binary.LittleEndian.Uint16(body[2:4]))
			w.rate = int(binary.LittleEndian.Uint32(body[4:8]))
			bits := int(binary.LittleEndian.Uint16(body[14:16]))
			frameSize = w.channels * ((bits + 7) / 8)
			sawFmt = true
		case "data":
			if !sawFmt {
				return w, errors.New("data chunk before fmt chunk")
			}
			if frameSize <= 0 {
				return w, errors.New("bad sample width")
			}
			w.frames = size / int64(frameSize)
			return w, nil
		}
		p += 8 + int(size) + int(size&1)
		if size > int64(len(b)) {
			break
		}
	}
	return w, errors.New("data chunk missing")
}
