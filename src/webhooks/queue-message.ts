/** The body of one webhook queue message: the delivery row to attempt. */
export interface DeliveryMessage {
  deliveryId: number;
}
