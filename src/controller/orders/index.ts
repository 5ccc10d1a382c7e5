export { ORDER_POLL_MS, startOrderController, type OrderController, type OrderControllerOptions } from './controller.ts';
