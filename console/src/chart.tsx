// uPlot (a small canvas chart library, no dependencies) wrapped for React: the chart is made once
// per mount and remade when its data or options change.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export function Chart({ options, data, label }: { options: Omit<uPlot.Options, 'width'>; data: uPlot.AlignedData; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = () => Math.max(280, Math.min(element.clientWidth, 720));
    const chart = new uPlot({ ...options, width: width() }, data, element);
    const resize = () => chart.setSize({ width: width(), height: options.height });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      chart.destroy();
    };
  }, [options, data]);
  return <div className="chart" ref={box} role="img" aria-label={label} />;
}
