// SVG to PNG without a browser: resvg (Rust, prebuilt in the @resvg/resvg-js npm package).
// Text uses the system's fonts (DejaVu Sans on Debian); with no font installed the PNG is still
// drawn, without its labels.
import { Resvg } from '@resvg/resvg-js';

export function svgToPng(svg: string): Buffer {
  return new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' }, background: '#ffffff' }).render().asPng();
}
